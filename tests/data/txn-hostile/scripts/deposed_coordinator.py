# A deposed transaction coordinator's stale markers (coordinator epoch 7, after a new coordinator
# wrote the same producer's markers at 8: the leader refuses them, TRANSACTION_COORDINATOR_FENCED).
#  open1:   transaction version 1. The first transaction commits (COMMIT to orders 0 at 7, re-sent
#           by the new coordinator at 8); the next one, at the same producer epoch, is open when
#           the deposed coordinator re-sends the first one's COMMIT at 7; it then aborts (EndTxn
#           accepted) and the new coordinator's ABORT at 8 is written.
#  open2:   the same under transaction version 2 (EndTxn v5 bumps the epoch; markers carry the
#           bumped one).
#  same1:   the next transaction commits on orders 1 (accepted, its COMMIT at 8 written); the
#           deposed coordinator's COMMIT of the first one for orders 0 at 7 comes after its EndTxn.
#  resend2: transaction version 2: the new coordinator re-sends the first transaction's COMMIT
#           after it completed, then the next transaction commits.
#  other1:  transaction version 1: after the first transaction's COMMIT to orders 0 at 7 (and its
#           re-send at 8), COMMIT markers at 8 for orders 1 alone: the producer's next
#           transaction, at the same epoch, all of whose other messages the capture lost (not a
#           re-send: it names a partition the first never had).
#  other32: other1 with orders 32 for orders 1 (partitions 32 apart once shared a bit of the
#           first transaction's partition set).
#  again1:  other1 with orders 0 again: COMMIT markers at 8 for a partition whose marker at 8 was
#           written already (a coordinator re-sends a marker until it is written, never after).
#  admin1:  the first transaction aborts (ABORT at 7, re-sent at 8); 60 s later an admin client's
#           ABORT at the producer's epoch and coordinator epoch 8 (kafka-transactions.sh abort of
#           the next transaction, hanging, its messages not captured): not a re-send.
#  mixed:   the first transaction committed on orders 0 and 2 at 7; the next one, on both, aborts;
#           its ABORT for orders 0 is written at 8; the deposed coordinator's COMMIT for orders 0
#           and 2 at 7 is refused for orders 0 and written to orders 2 (its leader last saw 7
#           there); then the ABORT for orders 2 at 8.
import sys; sys.path.insert(0, __import__('os').path.dirname(__file__))
from kpx import *
out = sys.argv[1]; v = sys.argv[2]
p = Pcap(out); T = 1_767_225_600_000_000
c = Client(p, 40001, 9092, T, 'prod')
l = Client(p, 40002, 9093, T, 'prod', sip='127.0.0.2')
m = Client(p, 40003, 9093, T, 'broker-0-txn-marker-sender', cip='127.0.0.1', sip='127.0.0.2')
n = Client(p, 40004, 9093, T, 'broker-1-txn-marker-sender', cip='127.0.0.3', sip='127.0.0.2')
c2 = Client(p, 40005, 9092, T, 'prod', sip='127.0.0.3')  # client to the new coordinator
t = T + 1000
FENCED = 52
if v in ('other1', 'other32', 'again1', 'admin1'):
    P1 = [('orders', [0])]
    commit = v != 'admin1'
    c.x(t, 'init_pid', 1, init_pid_req('tx'), init_pid_resp(4000, 0))
    c.x(t + 1000, 'add_parts', 1, add_parts_req('tx', 4000, 0, P1), add_parts_resp(P1))
    l.x(t + 2000, 'produce', 3, produce_req('tx', [('orders', [(0, batch(4000, 0, 3))])]), produce_resp([('orders', [(0, 0, 100)])]))
    c.x(t + 3000, 'end_txn', 1, end_txn_req('tx', 4000, 0, commit), end_txn_resp(0))
    m.x(t + 4000, 'wtm', 0, wtm_req([(4000, 0, commit, P1, 7)]), wtm_resp([(4000, [('orders', [(0, 0)])])]))
    n.x(t + 4500, 'wtm', 0, wtm_req([(4000, 0, commit, P1, 8)]), wtm_resp([(4000, [('orders', [(0, 0)])])]))
    if v == 'admin1':
        a = Client(p, 40006, 9093, T, 'adminclient-1', cip='127.0.0.9', sip='127.0.0.2')
        a.x(t + 60_000_000, 'wtm', 0, wtm_req([(4000, 0, False, P1, 8)]), wtm_resp([(4000, [('orders', [(0, 0)])])]))
    else:
        part = {'other1': 1, 'other32': 32, 'again1': 0}[v]
        n.x(t + 9000, 'wtm', 0, wtm_req([(4000, 0, True, [('orders', [part])], 8)]), wtm_resp([(4000, [('orders', [(part, 0)])])]))
elif v in ('open1', 'same1', 'mixed'):
    P1 = [('orders', [0, 2])] if v == 'mixed' else [('orders', [0])]
    c.x(t, 'init_pid', 1, init_pid_req('tx'), init_pid_resp(4000, 0))
    c.x(t + 1000, 'add_parts', 1, add_parts_req('tx', 4000, 0, P1), add_parts_resp(P1))
    l.x(t + 2000, 'produce', 3, produce_req('tx', [('orders', [(pp, batch(4000, 0, 3)) for pp in P1[0][1]])]), produce_resp([('orders', [(pp, 0, 100) for pp in P1[0][1]])]))
    c.x(t + 3000, 'end_txn', 1, end_txn_req('tx', 4000, 0, True), end_txn_resp(0))
    m.x(t + 4000, 'wtm', 0, wtm_req([(4000, 0, True, P1, 7)]), wtm_resp([(4000, [('orders', [(pp, 0) for pp in P1[0][1]])])]))
    if v != 'mixed':
        n.x(t + 4500, 'wtm', 0, wtm_req([(4000, 0, True, P1, 8)]), wtm_resp([(4000, [('orders', [(0,0)])])]))
    P2 = [('orders', [1])] if v == 'same1' else P1
    c2.x(t + 5000, 'add_parts', 1, add_parts_req('tx', 4000, 0, P2), add_parts_resp(P2))
    l.x(t + 6000, 'produce', 3, produce_req('tx', [('orders', [(pp, batch(4000, 0, 3)) for pp in P2[0][1]])]), produce_resp([('orders', [(pp, 0, 104) for pp in P2[0][1]])]))
    if v == 'open1':
        m.x(t + 6500, 'wtm', 0, wtm_req([(4000, 0, True, [('orders',[0])], 7)]), wtm_resp([(4000, [('orders', [(0,FENCED)])])]))
        c2.x(t + 7000, 'end_txn', 1, end_txn_req('tx', 4000, 0, False), end_txn_resp(0))
        n.x(t + 8000, 'wtm', 0, wtm_req([(4000, 0, False, [('orders',[0])], 8)]), wtm_resp([(4000, [('orders', [(0,0)])])]))
    elif v == 'same1':
        c2.x(t + 7000, 'end_txn', 1, end_txn_req('tx', 4000, 0, True), end_txn_resp(0))
        m.x(t + 7500, 'wtm', 0, wtm_req([(4000, 0, True, [('orders',[0])], 7)]), wtm_resp([(4000, [('orders', [(0,FENCED)])])]))
        n.x(t + 8000, 'wtm', 0, wtm_req([(4000, 0, True, [('orders',[1])], 8)]), wtm_resp([(4000, [('orders', [(1,0)])])]))
    else:  # mixed
        c2.x(t + 7000, 'end_txn', 1, end_txn_req('tx', 4000, 0, False), end_txn_resp(0))
        n.x(t + 7200, 'wtm', 0, wtm_req([(4000, 0, False, [('orders',[0])], 8)]), wtm_resp([(4000, [('orders', [(0,0)])])]))
        m.x(t + 7500, 'wtm', 0, wtm_req([(4000, 0, True, [('orders',[0, 2])], 7)]), wtm_resp([(4000, [('orders', [(0,FENCED), (2,0)])])]))
        n.x(t + 8000, 'wtm', 0, wtm_req([(4000, 0, False, [('orders',[2])], 8)]), wtm_resp([(4000, [('orders', [(2,0)])])]))
elif v in ('open2', 'resend2'):
    c.x(t, 'init_pid', 1, init_pid_req('tx'), init_pid_resp(4000, 3))
    l.x(t + 2000, 'produce', 3, produce_req('tx', [('orders', [(0, batch(4000, 3, 3))])]), produce_resp([('orders', [(0, 0, 100)])]))
    c.x(t + 3000, 'end_txn', 5, end_txn_req5('tx', 4000, 3, True), end_txn_resp5(0, 4000, 4), flexible=True)
    m.x(t + 4000, 'wtm', 2, wtm_req_flex([(4000, 4, True, [('orders',[0])], 7, 2)], v2=True), wtm_resp_flex([(4000, [('orders', [(0,0)])])]), flexible=True)
    n.x(t + 4500, 'wtm', 2, wtm_req_flex([(4000, 4, True, [('orders',[0])], 8, 2)], v2=True), wtm_resp_flex([(4000, [('orders', [(0,0)])])]), flexible=True)
    if v == 'resend2':
        # txn1 written out by now? (next message of the producer accepted)
        l.x(t + 5000, 'produce', 3, produce_req('tx', [('orders', [(1, batch(4000, 4, 3))])]), produce_resp([('orders', [(1, 0, 300)])]))
        c2.x(t + 7000, 'end_txn', 5, end_txn_req5('tx', 4000, 4, True), end_txn_resp5(0, 4000, 5), flexible=True)
        n.x(t + 8000, 'wtm', 2, wtm_req_flex([(4000, 5, True, [('orders',[1])], 8, 2)], v2=True), wtm_resp_flex([(4000, [('orders', [(1,0)])])]), flexible=True)
    else:
        l.x(t + 5000, 'produce', 3, produce_req('tx', [('orders', [(0, batch(4000, 4, 3))])]), produce_resp([('orders', [(0, 0, 104)])]))
        m.x(t + 6000, 'wtm', 2, wtm_req_flex([(4000, 4, True, [('orders',[0])], 7, 2)], v2=True), wtm_resp_flex([(4000, [('orders', [(0,FENCED)])])]), flexible=True)
        c2.x(t + 7000, 'end_txn', 5, end_txn_req5('tx', 4000, 4, False), end_txn_resp5(0, 4000, 5), flexible=True)
        n.x(t + 8000, 'wtm', 2, wtm_req_flex([(4000, 5, False, [('orders',[0])], 8, 2)], v2=True), wtm_resp_flex([(4000, [('orders', [(0,0)])])]), flexible=True)
p.close()
