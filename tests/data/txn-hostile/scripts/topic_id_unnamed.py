"""A Kafka 4.1 client (transaction version 2, Produce v13: topic ids, not names) commits a transaction; its COMMIT markers
(WriteTxnMarkers v2) name the topics. mode: meta (Metadata v12 at the start maps id 77 to orders) | nometa (no Metadata
in the capture: the client fetched it before; the markers' one new name, orders, names id 77, whose partition 0 they
mark) | two_ids (no Metadata, orders 0 and payments 0 written by ids 77 and 78: which is which is not told, both stay
unnamed beside the markers' partitions)."""
import sys
from kp3 import *
p = Pcap(sys.argv[1]); MODE = sys.argv[2]
T = 1_767_225_600_000_000
B = [(0,'127.0.0.1',9092),(1,'127.0.0.2',9092)]
c = Client(p, 40001, 9092, T, 'prod')
if MODE == 'meta':
    c.x(T+2000, 'metadata', 12, metadata_req12(), metadata_resp12(B, [('orders', 77, [(0,1)])]), flexible=True)
c.x(T+3000, 'init_pid', 5, init_pid_req3('tx', 60000, -1, -1), init_pid_resp3(4000, 0), flexible=True)
l = Client(p, 40002, 9092, T, 'prod', sip='127.0.0.2')
ids = [77, 78] if MODE == 'two_ids' else [77]
names = ['orders', 'payments'][:len(ids)]
l.x(T+5000, 'produce', 13, produce_req13('tx', [(i, [(0, batch_seq(4000, 0, 3))]) for i in ids]), produce_resp13([(i, [(0, 0, 100)]) for i in ids]), flexible=True)
c.x(T+6000, 'end_txn', 5, end_txn_req5('tx', 4000, 0, True), end_txn_resp5(0, 4000, 1), flexible=True)
m = Client(p, 40003, 9092, T, 'broker-0-txn-marker-sender', cip='127.0.0.1', sip='127.0.0.2')
m.x(T+7000, 'wtm', 2, wtm_req_flex([(4000, 1, True, [(n, [0]) for n in names], 7, 2)], v2=True), wtm_resp_flex([(4000, [(n, [(0, 0)]) for n in names])]), flexible=True)
c.x(T+40_000_000, 'find_coord', 0, find_coord_req('tx'), find_coord_resp(0, '127.0.0.1', 9092))
p.close()
