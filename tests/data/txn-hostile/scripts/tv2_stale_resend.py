"""From a hostile review: transaction version 2. Producer 4000 (InitProducerId: epoch 5, timeout 10 s)
commits at epoch 5 (EndTxn v5 answered epoch 6; markers epoch 6) and at epoch 6 (answered epoch 7;
markers epoch 7). Then a deposed coordinator (node 2, older coordinator epoch) resends the epoch-6
markers (TV2) -- refused by the leader INVALID_PRODUCER_EPOCH (mode refused) or not answered (mode
noanswer). Then the producer's transaction at epoch 7 writes orders 0 and stays open 100 s.
mode none: no stale resend (control)."""
import sys
from kp import *
p = Pcap(sys.argv[1]); mode = sys.argv[2]
T = 1_767_225_600_000_000
B = [(0,'127.0.0.1',9092),(1,'127.0.0.1',9093),(2,'127.0.0.1',9094)]
c = Client(p, 40001, 9092, T, 'prod')
c.x(T+1000, 'find_coord', 0, find_coord_req('tx'), find_coord_resp(0, '127.0.0.1', 9092))
c.x(T+2000, 'metadata', 1, metadata_req(), metadata_resp(B, [('orders', [(0,1)])]))
c.x(T+3000, 'init_pid', 1, init_pid_req('tx', 10000), init_pid_resp(4000, 5))
l = Client(p, 40002, 9093, T, 'prod')
m = Client(p, 40003, 9093, T, 'broker-0-txn-marker-sender', cip='127.0.0.1')
off = 100
for i, e in enumerate((5, 6)):
    t = T + 5000 + i*1_000_000
    l.x(t, 'produce', 3, produce_req('tx', [('orders', [(0, batch(4000, e, 3))])]), produce_resp([('orders', [(0, 0, off)])]))
    c.x(t+1000, 'end_txn', 5, end_txn_req5('tx', 4000, e, True), end_txn_resp5(0, 4000, e+1), flexible=True)
    m.x(t+2000, 'wtm', 2, wtm_req_flex([(4000, e+1, True, [('orders',[0])], 7, 2)], v2=True), wtm_resp_flex([(4000, [('orders', [(0,0)])])]), flexible=True)
    off += 4
if mode != 'none':
    z = Client(p, 40004, 9093, T, 'broker-2-txn-marker-sender', cip='127.0.0.1')
    z.x(T+3_000_000, 'wtm', 2, wtm_req_flex([(4000, 6, True, [('orders',[0])], 6, 2)], v2=True),
        wtm_resp_flex([(4000, [('orders', [(0,47)])])]) if mode == 'refused' else None, flexible=True)
l.x(T+4_000_000, 'produce', 3, produce_req('tx', [('orders', [(0, batch(4000, 7, 3))])]), produce_resp([('orders', [(0, 0, off)])]))
c.x(T+104_000_000, 'metadata', 1, metadata_req(['orders']), metadata_resp(B, [('orders', [(0,1)])]))
p.close()
