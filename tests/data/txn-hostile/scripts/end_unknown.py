"""EndTxn accepted with no partition known (capture begun inside the transaction). mode:
 tv2        - EndTxn v5 commit at epoch 3 (response: epoch 4), markers at epoch 4 (KIP-890)
 tv2_next   - as tv2, then the producer's next transaction (Produce at epoch 4) 1 s later
 abort_commit - EndTxn abort accepted; then COMMIT markers of that pid/epoch
 abort_abort - EndTxn abort accepted; ABORT markers
 end_only   - EndTxn only, capture ends 60 s later (no markers)
 tv1_next   - EndTxn commit at epoch 0, no markers (coordinator-local), next txn add+produce 10 ms later, commit
"""
import sys
from kh import *
w = W(sys.argv[1]); mode = sys.argv[2]; T = T0
co = C(w, '10.0.0.1', 40001, '127.0.0.1', 9092, T)
ld = C(w, '10.0.0.1', 40002, '127.0.0.2', 9092, T)
mk = C(w, '127.0.0.1', 40003, '127.0.0.2', 9092, T)
MS = 'broker-0-txn-marker-sender'
O0 = [('orders',[0])]
if mode.startswith('tv2'):
    co.x(T+5000, 'end_txn', 5, end_txn_req5('tx-a', 4000, 3, True), end_txn_resp5(0, 4000, 4), flexible=True)
    mk.x(T+6000, 'wtm', 2, wtm_req_flex([(4000, 4, True, O0, 7, 2)], v2=True), wtm_resp_flex([(4000, [('orders', [(0,0)])])]), cid=MS, flexible=True)
    if mode == 'tv2_next':
        ld.x(T+1_000_000, 'produce', 3, produce_req('tx-a', [('orders', [(1, batch_seq(4000,4,2))])]), produce_resp([('orders', [(1,0,200)])]))
        co.x(T+1_001_000, 'end_txn', 5, end_txn_req5('tx-a', 4000, 4, True), end_txn_resp5(0, 4000, 5), flexible=True)
        mk.x(T+1_002_000, 'wtm', 2, wtm_req_flex([(4000, 5, True, [('orders',[1])], 7, 2)], v2=True), wtm_resp_flex([(4000, [('orders', [(1,0)])])]), cid=MS, flexible=True)
elif mode == 'abort_commit' or mode == 'abort_abort':
    co.x(T+5000, 'end_txn', 1, end_txn_req('tx-a', 4000, 0, False), end_txn_resp(0))
    mk.x(T+6000, 'wtm', 0, wtm_req([(4000, 0, mode == 'abort_commit', O0, 7)]), wtm_resp([(4000, [('orders', [(0,0)])])]), cid=MS)
elif mode == 'end_only':
    co.x(T+5000, 'end_txn', 1, end_txn_req('tx-a', 4000, 0, True), end_txn_resp(0))
    co.pk(T+60_000_000, True, co.cseq, co.sseq, ACK)
elif mode == 'tv1_next':
    co.x(T+5000, 'end_txn', 1, end_txn_req('tx-a', 4000, 0, True), end_txn_resp(0))
    co.x(T+15000, 'add_parts', 1, add_parts_req('tx-a', 4000, 0, O0), add_parts_resp(O0))
    ld.x(T+16000, 'produce', 3, produce_req('tx-a', [('orders', [(0, batch_seq(4000,0,3))])]), produce_resp([('orders', [(0,0,100)])]))
    co.x(T+17000, 'end_txn', 1, end_txn_req('tx-a', 4000, 0, True), end_txn_resp(0))
    mk.x(T+18000, 'wtm', 0, wtm_req([(4000, 0, True, O0, 7)]), wtm_resp([(4000, [('orders', [(0,0)])])]), cid=MS)
w.close()
