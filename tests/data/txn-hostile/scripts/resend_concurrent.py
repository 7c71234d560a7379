# From a hostile review of the re-send rule (2026-12-06): a re-send joined the producer's next
# transaction, begun by a refused message (once that transaction read COMMITTED).
# A coordinator failover while txn1 is PrepareCommit: the producer's next transaction is refused
# CONCURRENT_TRANSACTIONS until the new coordinator's re-send of txn1's markers completes.
#  tv1: txn1 (epoch 0) COMMIT orders 0 at coordinator epoch 7, written. txn2's AddPartitionsToTxn
#       (orders 0) to the new coordinator answered CONCURRENT_TRANSACTIONS (51); the new
#       coordinator re-sends txn1's COMMIT at 8 (written); AddPartitions again: NONE; Produce;
#       EndTxn(abort); ABORT at 8.
#  tv2: txn1 (epoch 3, EndTxn v5 -> 4) COMMIT at producer epoch 4, coordinator epoch 7, written.
#       txn2's Produce at epoch 4 answered NOT_ENOUGH_REPLICAS (19: what a leader turns the
#       coordinator's CONCURRENT_TRANSACTIONS into for a Produce, KIP-890); the re-send at 8
#       (producer epoch 4) written; Produce again: NONE; EndTxn v5 abort (-> 5); ABORT at 5.
import sys; sys.path.insert(0, __import__('os').path.dirname(__file__))
from kpx import *
T = 1_767_225_600_000_000
out, v = sys.argv[1], sys.argv[2]
p = Pcap(out)
c = Client(p, 40001, 9092, T, 'prod')
l = Client(p, 40002, 9093, T, 'prod', sip='127.0.0.2')
m = Client(p, 40003, 9093, T, 'broker-0-txn-marker-sender', cip='127.0.0.1', sip='127.0.0.2')
n = Client(p, 40004, 9093, T, 'broker-1-txn-marker-sender', cip='127.0.0.3', sip='127.0.0.2')
c2 = Client(p, 40005, 9092, T, 'prod', sip='127.0.0.3')
t = T + 1000
O0 = [('orders', [0])]
if v == 'tv1':
    c.x(t, 'init_pid', 1, init_pid_req('tx'), init_pid_resp(4000, 0))
    c.x(t + 1000, 'add_parts', 1, add_parts_req('tx', 4000, 0, O0), add_parts_resp(O0))
    l.x(t + 2000, 'produce', 3, produce_req('tx', [('orders', [(0, batch(4000, 0, 3))])]), produce_resp([('orders', [(0, 0, 100)])]))
    c.x(t + 3000, 'end_txn', 1, end_txn_req('tx', 4000, 0, True), end_txn_resp(0))
    m.x(t + 4000, 'wtm', 0, wtm_req([(4000, 0, True, O0, 7)]), wtm_resp([(4000, [('orders', [(0, 0)])])]))
    t += 1_000_000
    c2.x(t, 'add_parts', 1, add_parts_req('tx', 4000, 0, O0), add_parts_resp(O0, err=51))
    n.x(t + 1000, 'wtm', 0, wtm_req([(4000, 0, True, O0, 8)]), wtm_resp([(4000, [('orders', [(0, 0)])])]))
    c2.x(t + 20000, 'add_parts', 1, add_parts_req('tx', 4000, 0, O0), add_parts_resp(O0))
    l.x(t + 21000, 'produce', 3, produce_req('tx', [('orders', [(0, batch(4000, 0, 3))])]), produce_resp([('orders', [(0, 0, 104)])]))
    c2.x(t + 22000, 'end_txn', 1, end_txn_req('tx', 4000, 0, False), end_txn_resp(0))
    n.x(t + 23000, 'wtm', 0, wtm_req([(4000, 0, False, O0, 8)]), wtm_resp([(4000, [('orders', [(0, 0)])])]))
else:
    c.x(t, 'init_pid', 1, init_pid_req('tx'), init_pid_resp(4000, 3))
    l.x(t + 2000, 'produce', 3, produce_req('tx', [('orders', [(0, batch(4000, 3, 3))])]), produce_resp([('orders', [(0, 0, 100)])]))
    c.x(t + 3000, 'end_txn', 5, end_txn_req5('tx', 4000, 3, True), end_txn_resp5(0, 4000, 4), flexible=True)
    m.x(t + 4000, 'wtm', 2, wtm_req_flex([(4000, 4, True, O0, 7, 2)], v2=True), wtm_resp_flex([(4000, [('orders', [(0,0)])])]), flexible=True)
    t += 1_000_000
    l.x(t, 'produce', 3, produce_req('tx', [('orders', [(0, batch(4000, 4, 3))])]), produce_resp([('orders', [(0, 19, -1)])]))
    n.x(t + 1000, 'wtm', 2, wtm_req_flex([(4000, 4, True, O0, 8, 2)], v2=True), wtm_resp_flex([(4000, [('orders', [(0,0)])])]), flexible=True)
    l.x(t + 20000, 'produce', 3, produce_req('tx', [('orders', [(0, batch(4000, 4, 3))])]), produce_resp([('orders', [(0, 0, 104)])]))
    c2.x(t + 22000, 'end_txn', 5, end_txn_req5('tx', 4000, 4, False), end_txn_resp5(0, 4000, 5), flexible=True)
    n.x(t + 23000, 'wtm', 2, wtm_req_flex([(4000, 5, False, O0, 8, 2)], v2=True), wtm_resp_flex([(4000, [('orders', [(0,0)])])]), flexible=True)
p.close()
