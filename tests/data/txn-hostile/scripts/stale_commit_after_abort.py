# A transaction commits (its COMMIT marker written with coordinator_epoch 7); the producer's next
# transaction at the same epoch aborts (EndTxn accepted); a deposed coordinator then sends the
# first transaction's COMMIT marker again with coordinator_epoch 6 (its leader refuses it,
# TRANSACTION_COORDINATOR_FENCED), and the coordinator's ABORT marker follows. From a hostile
# review: the stale COMMIT once decided the aborted transaction's outcome ("committed", with a
# false accepted_abort_committed) and its ABORT marker made a second transaction. Variant
# 'local': the second transaction's partition is led by the coordinator (no ABORT marker on the
# wire). Variant 'tv2': transaction version 2 (EndTxn v5 bumps the epoch; the markers carry the
# bumped one), the second transaction empty; the stale COMMIT once made a third, invented
# transaction.
import sys; sys.path.insert(0, __import__('os').path.dirname(__file__))
from kp import *
out = sys.argv[1]; v = sys.argv[2] if len(sys.argv) > 2 else 'wire'
p = Pcap(out); T = 1_767_225_600_000_000
c = Client(p, 40001, 9092, T, 'prod')
l = Client(p, 40002, 9093, T, 'prod', sip='127.0.0.2')
m = Client(p, 40003, 9093, T, 'broker-0-txn-marker-sender', cip='127.0.0.1', sip='127.0.0.2')
z = Client(p, 40004, 9093, T, 'broker-1-txn-marker-sender', cip='127.0.0.3', sip='127.0.0.2')
lc = Client(p, 40005, 9092, T, 'prod')
t = T + 1000
if v == 'tv2':
    c.x(t, 'init_pid', 1, init_pid_req('tx'), init_pid_resp(4000, 3))
    l.x(t + 2000, 'produce', 3, produce_req('tx', [('orders', [(0, batch(4000, 3, 3))])]), produce_resp([('orders', [(0, 0, 100)])]))
    c.x(t + 3000, 'end_txn', 5, end_txn_req5('tx', 4000, 3, True), end_txn_resp5(0, 4000, 4), flexible=True)
    m.x(t + 4000, 'wtm', 2, wtm_req_flex([(4000, 4, True, [('orders',[0])], 7, 2)], v2=True), wtm_resp_flex([(4000, [('orders', [(0,0)])])]), flexible=True)
    c.x(t + 6000, 'end_txn', 5, end_txn_req5('tx', 4000, 4, False), end_txn_resp5(0, 4000, 5), flexible=True)
    z.x(t + 8000, 'wtm', 2, wtm_req_flex([(4000, 4, True, [('orders',[0])], 6, 2)], v2=True), wtm_resp_flex([(4000, [('orders', [(0,52)])])]), flexible=True)
    p.close()
    sys.exit(0)
c.x(t, 'init_pid', 1, init_pid_req('tx'), init_pid_resp(4000, 0))
c.x(t + 1000, 'add_parts', 1, add_parts_req('tx', 4000, 0, [('orders',[0])]), add_parts_resp([('orders',[0])]))
l.x(t + 2000, 'produce', 3, produce_req('tx', [('orders', [(0, batch(4000, 0, 3))])]), produce_resp([('orders', [(0, 0, 100)])]))
c.x(t + 3000, 'end_txn', 1, end_txn_req('tx', 4000, 0, True), end_txn_resp(0))
m.x(t + 4000, 'wtm', 0, wtm_req([(4000, 0, True, [('orders',[0])], 7)]), wtm_resp([(4000, [('orders', [(0,0)])])]))
if v == 'local':
    c.x(t + 5000, 'add_parts', 1, add_parts_req('tx', 4000, 0, [('orders',[5])]), add_parts_resp([('orders',[5])]))
    lc.x(t + 6000, 'produce', 3, produce_req('tx', [('orders', [(5, batch(4000, 0, 3))])]), produce_resp([('orders', [(5, 0, 200)])]))
else:
    c.x(t + 5000, 'add_parts', 1, add_parts_req('tx', 4000, 0, [('orders',[0])]), add_parts_resp([('orders',[0])]))
    l.x(t + 6000, 'produce', 3, produce_req('tx', [('orders', [(0, batch(4000, 0, 3))])]), produce_resp([('orders', [(0, 0, 104)])]))
c.x(t + 7000, 'end_txn', 1, end_txn_req('tx', 4000, 0, False), end_txn_resp(0))
z.x(t + 7500, 'wtm', 0, wtm_req([(4000, 0, True, [('orders',[0])], 6)]), wtm_resp([(4000, [('orders', [(0,52)])])]))
if v != 'local':
    m.x(t + 8000, 'wtm', 0, wtm_req([(4000, 0, False, [('orders',[0])], 7)]), wtm_resp([(4000, [('orders', [(0,0)])])]))
p.close()
