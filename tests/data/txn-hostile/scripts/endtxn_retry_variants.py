# EndTxn accepted then retried (a client whose request timed out).
#  conc:   retry on a new connection answered CONCURRENT_TRANSACTIONS, then again NONE; markers.
#  tv2:    transaction version 2: EndTxn v5 epoch 3 -> NONE (epoch 4); retry at epoch 3 -> NONE (4);
#          markers at 4; the next transaction at epoch 4 (Produce), EndTxn v5 epoch 4 -> epoch 5.
#  fenced: retry answered PRODUCER_FENCED before the markers (retry on new connection).
#  noresp: retry on a new connection never answered (capture ends 40 s later); markers written.
import sys; sys.path.insert(0, __import__('os').path.dirname(__file__))
from kpx import *
out = sys.argv[1]; v = sys.argv[2]
p = Pcap(out); T = 1_767_225_600_000_000
c = Client(p, 40001, 9092, T, 'prod')
c2 = Client(p, 40011, 9092, T, 'prod')
l = Client(p, 40002, 9093, T, 'prod', sip='127.0.0.2')
m = Client(p, 40003, 9093, T, 'broker-0-txn-marker-sender', cip='127.0.0.1', sip='127.0.0.2')
t = T + 1000
if v == 'tv2':
    c.x(t, 'init_pid', 1, init_pid_req('tx'), init_pid_resp(4000, 3))
    l.x(t + 2000, 'produce', 3, produce_req('tx', [('orders', [(0, batch(4000, 3, 3))])]), produce_resp([('orders', [(0, 0, 100)])]))
    c.x(t + 3000, 'end_txn', 5, end_txn_req5('tx', 4000, 3, True), end_txn_resp5(0, 4000, 4), flexible=True)
    c2.x(t + 3500, 'end_txn', 5, end_txn_req5('tx', 4000, 3, True), end_txn_resp5(0, 4000, 4), flexible=True)
    m.x(t + 4000, 'wtm', 2, wtm_req_flex([(4000, 4, True, [('orders',[0])], 7, 2)], v2=True), wtm_resp_flex([(4000, [('orders', [(0,0)])])]), flexible=True)
    l.x(t + 5000, 'produce', 3, produce_req('tx', [('orders', [(0, batch(4000, 4, 3))])]), produce_resp([('orders', [(0, 0, 104)])]))
    c2.x(t + 7000, 'end_txn', 5, end_txn_req5('tx', 4000, 4, True), end_txn_resp5(0, 4000, 5), flexible=True)
    m.x(t + 8000, 'wtm', 2, wtm_req_flex([(4000, 5, True, [('orders',[0])], 7, 2)], v2=True), wtm_resp_flex([(4000, [('orders', [(0,0)])])]), flexible=True)
    p.close(); sys.exit()
c.x(t, 'init_pid', 1, init_pid_req('tx'), init_pid_resp(4000, 0))
c.x(t + 1000, 'add_parts', 1, add_parts_req('tx', 4000, 0, [('orders',[0])]), add_parts_resp([('orders',[0])]))
l.x(t + 2000, 'produce', 3, produce_req('tx', [('orders', [(0, batch(4000, 0, 3))])]), produce_resp([('orders', [(0, 0, 100)])]))
c.x(t + 3000, 'end_txn', 1, end_txn_req('tx', 4000, 0, True), end_txn_resp(0))
if v == 'conc':
    c2.x(t + 3300, 'end_txn', 1, end_txn_req('tx', 4000, 0, True), end_txn_resp(51))
    c2.x(t + 3600, 'end_txn', 1, end_txn_req('tx', 4000, 0, True), end_txn_resp(0))
    m.x(t + 4000, 'wtm', 0, wtm_req([(4000, 0, True, [('orders',[0])], 7)]), wtm_resp([(4000, [('orders', [(0,0)])])]))
elif v == 'fenced':
    c2.x(t + 3300, 'end_txn', 1, end_txn_req('tx', 4000, 0, True), end_txn_resp(90))
    m.x(t + 4000, 'wtm', 0, wtm_req([(4000, 0, True, [('orders',[0])], 7)]), wtm_resp([(4000, [('orders', [(0,0)])])]))
elif v == 'noresp':
    req_only(c2, t + 3300, 'end_txn', 1, end_txn_req('tx', 4000, 0, True))
    m.x(t + 4000, 'wtm', 0, wtm_req([(4000, 0, True, [('orders',[0])], 7)]), wtm_resp([(4000, [('orders', [(0,0)])])]))
    l.x(t + 40_000_000, 'fetch', 4, fetch_req([('orders',[0])]), fetch_resp([('orders', [(0, 200, 200)])]))
p.close()
