# A capture taken on the producer's host: only the client's own connections (FindCoordinator,
# Metadata, InitProducerId, and per transaction AddPartitionsToTxn, Produce to the leader,
# EndTxn commit accepted). The coordinator's WriteTxnMarkers to the leader go between two
# brokers and are not on this host's wire. Transactions every 20 s (TV1, same epoch): each
# next AddPartitionsToTxn accepted proves the previous one's markers were written (the
# coordinator answers CONCURRENT_TRANSACTIONS until they are).
# usage: client_side_only.py OUT [ntxn] [gap_s]
import sys; sys.path.insert(0, __import__('os').path.dirname(__file__))
from kp2 import *
out = sys.argv[1]
n = int(sys.argv[2]) if len(sys.argv) > 2 else 3
gap = float(sys.argv[3]) if len(sys.argv) > 3 else 20
p = Pcap(out)
c = Client(p, 40001, 9092, T, 'prod')
c.x(T+1000, 'find_coord', 0, find_coord_req('tx'), find_coord_resp(0, '127.0.0.1', 9092))
c.x(T+2000, 'metadata', 1, metadata_req(), metadata_resp([(0,'127.0.0.1',9092),(1,'127.0.0.2',9092)], [('orders',[(0,1)])]))
c.x(T+3000, 'init_pid', 1, init_pid_req('tx', 60000), init_pid_resp(4000, 0))
l = Client(p, 40002, 9092, T, 'prod', sip='127.0.0.2')
seq = 0
for i in range(n):
    t = T + 10_000 + int(i * gap * 1_000_000)
    c.x(t, 'add_parts', 1, add_parts_req('tx', 4000, 0, [('orders',[0])]), add_parts_resp([('orders',[0])]))
    l.x(t+1000, 'produce', 3, produce_req('tx', [('orders', [(0, batch_seq(4000, 0, 3, seq))])]), produce_resp([('orders', [(0, 0, 100 + 4*i)])]))
    seq += 3
    c.x(t+2000, 'end_txn', 1, end_txn_req('tx', 4000, 0, True), end_txn_resp(0))
# the capture ends gap s after the last EndTxn
c.conn.p.pkt(T + 10_000 + int(n * gap * 1_000_000), '10.0.0.1', 40001, '127.0.0.1', 9092, c.conn.cseq, c.conn.sseq, ACK)
p.close()
