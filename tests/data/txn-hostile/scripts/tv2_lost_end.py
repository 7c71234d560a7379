"""Transaction version 2 (KIP-890: the coordinator bumps the producer epoch at every end): producer 4000 commits a
transaction at epoch 5 (EndTxn v5; its markers at epoch 6), then writes at epoch 6 and is left open for 70 s.
mode: lost (the EndTxn response, which says epoch 6, lost) | markers_only (no EndTxn captured, as on a broker that is
not the coordinator's client side): the transaction at epoch 6 began in the capture, after that end (once "begun before
the capture", its outcome unknown)."""
import sys
from kp import *
p = Pcap(sys.argv[1]); mode = sys.argv[2]
T = 1_767_225_600_000_000
B = [(0,'127.0.0.1',9092),(1,'127.0.0.1',9093)]
c = Client(p, 40001, 9092, T, 'prod')
c.x(T+1000, 'find_coord', 0, find_coord_req('tx'), find_coord_resp(0, '127.0.0.1', 9092))
c.x(T+2000, 'metadata', 1, metadata_req(), metadata_resp(B, [('orders', [(0,1),(1,1)])]))
c.x(T+3000, 'init_pid', 1, init_pid_req('tx'), init_pid_resp(4000, 5))
l = Client(p, 40002, 9093, T, 'prod')
m = Client(p, 40003, 9093, T, 'broker-0-txn-marker-sender', cip='127.0.0.1')
l.x(T+5000, 'produce', 3, produce_req('tx', [('orders', [(0, batch(4000, 5, 3))])]), produce_resp([('orders', [(0, 0, 100)])]))
if mode == 'lost':
    c.x(T+6000, 'end_txn', 5, end_txn_req5('tx', 4000, 5, True), None, flexible=True)
m.x(T+7000, 'wtm', 2, wtm_req_flex([(4000, 6, True, [('orders',[0])], 7, 2)], v2=True), wtm_resp_flex([(4000, [('orders', [(0,0)])])]), flexible=True)
l.x(T+8000, 'produce', 3, produce_req('tx', [('orders', [(1, batch(4000, 6, 2))])]), produce_resp([('orders', [(1, 0, 200)])]))
c.x(T+70_000_000, 'metadata', 1, metadata_req(['orders']), metadata_resp(B, [('orders', [(0,1),(1,1)])]))
p.close()
