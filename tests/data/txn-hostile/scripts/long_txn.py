"""From a hostile review: a stream processor's exactly-once sink (Flink) keeps a transaction open for its checkpoint
interval, with a long transaction.timeout.ms set by its InitProducerId before the capture: Produce batches every 10 s into
orders 0, a read_committed consumer fetching every 2 s (its last stable offset stays at the transaction's first batch while
the high watermark grows), the commit at 200 s. mode: commit (the default) | open (no commit)."""
import sys
from kp import *
p = Pcap(sys.argv[1]); MODE = sys.argv[2] if len(sys.argv) > 2 else 'commit'
T = 1_767_225_600_000_000
B = [(0,'127.0.0.1',9092),(1,'127.0.0.2',9092)]
c = Client(p, 40001, 9092, T, 'flink-sink')
c.x(T+2000, 'metadata', 1, metadata_req(), metadata_resp(B, [('orders', [(0,1)])]))
l = Client(p, 40002, 9092, T, 'flink-sink', sip='127.0.0.2')
cons = Client(p, 40005, 9092, T, 'consumer', cip='10.0.0.7', sip='127.0.0.2')
off = 1000; first = 1000
ev = []
for k in range(20):
    ev.append((T + 5000 + k*10_000_000, 'p'))
for k in range(120):
    ev.append((T + 6000 + k*2_000_000, 'f'))
ev.sort()
hw = 1000
for t, e in ev:
    if e == 'p':
        if t < T + 200_000_000:
            l.x(t, 'produce', 3, produce_req('sink-0', [('orders', [(0, batch(4000, 3, 10))])]), produce_resp([('orders', [(0, 0, off)])]))
            off += 10; hw = off
    else:
        lso = first if t < T + 200_010_000 else hw
        cons.x(t, 'fetch', 4, fetch_req([('orders', [0])]), fetch_resp([('orders', [(0, hw, lso)])]))
if MODE == 'commit':
    c.x(T+200_000_000, 'end_txn', 1, end_txn_req('sink-0', 4000, 3, True), end_txn_resp(0))
    m = Client(p, 40003, 9092, T+200_000_000, 'broker-0-txn-marker-sender', cip='127.0.0.1', sip='127.0.0.2')
    m.x(T+200_001_000, 'wtm', 1, wtm_req_flex([(4000, 3, True, [('orders',[0])], 7)]), wtm_resp_flex([(4000, [('orders', [(0,0)])])]), flexible=True)
p.close()
