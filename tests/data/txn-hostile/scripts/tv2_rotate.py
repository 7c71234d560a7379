# KIP-890 epoch exhaustion, as Kafka does it: txn1 of 4000 at epoch 32766 commits; the EndTxn v5
# response hands the client a new producer id 5000 epoch 0; markers carry 4000/32767. txn2
# (5000/0) then begins and is left open at the capture's end.
import sys; sys.path.insert(0, '/tmp/hostile/repro')
from kp import *
p = Pcap(sys.argv[1])
T = 1_767_225_600_000_000
c = Client(p, 40001, 9092, T, 'prod')
c.x(T+1000, 'find_coord', 0, find_coord_req('tx'), find_coord_resp(0, '127.0.0.1', 9092))
c.x(T+3000, 'init_pid', 1, init_pid_req('tx'), init_pid_resp(4000, 32766))
l = Client(p, 40002, 9093, T, 'prod')
m = Client(p, 40003, 9093, T, 'broker-0-txn-marker-sender', cip='127.0.0.1')
l.x(T+5000, 'produce', 3, produce_req('tx', [('orders', [(0, batch(4000, 32766, 3))])]), produce_resp([('orders', [(0, 0, 100)])]))
c.x(T+6000, 'end_txn', 5, end_txn_req5('tx', 4000, 32766, True), end_txn_resp5(0, 5000, 0), flexible=True)
m.x(T+7000, 'wtm', 2, wtm_req_flex([(4000, 32767, True, [('orders',[0])], 7, 2)], v2=True), wtm_resp_flex([(4000, [('orders', [(0,0)])])]), flexible=True)
l.x(T+8000, 'produce', 3, produce_req('tx', [('orders', [(1, batch(5000, 0, 2))])]), produce_resp([('orders', [(1, 0, 200)])]))
p.close()
