"""A committed transaction whose EndTxn exchange the capture partly lost. mode:
 req    - the whole EndTxn request segment lost (response NONE captured), COMMIT markers on the wire
 resp   - the EndTxn response lost, markers on the wire
 both   - request and response lost, markers on the wire
 req_local / resp_local / both_local - the same, partitions led by the coordinator (no markers on the wire);
          the producer's next transaction (same epoch) follows 1 s later and commits
 req_client / ... - partitions led by node 1 but no markers captured (a capture of the client's host); capture runs 90 s"""
import sys
from kh import *
w = W(sys.argv[1]); mode = sys.argv[2]; T = T0
local = mode.endswith('_local') or mode.endswith('_client'); L = 0 if mode.endswith('_local') else 1
co = C(w, '10.0.0.1', 40001, '127.0.0.1', 9092, T)
ld = C(w, '10.0.0.1', 40002, '127.0.0.2', 9092, T)
mk = C(w, '127.0.0.1', 40003, '127.0.0.2', 9092, T)
co.x(T+1000, 'metadata', 1, metadata_req(), metadata_resp(BROKERS, [('orders', [(0,L),(1,L)])]))
co.x(T+2000, 'init_pid', 1, init_pid_req('tx-a'), init_pid_resp(4000, 0))
def one(t, parts, off):
    co.x(t, 'add_parts', 1, add_parts_req('tx-a', 4000, 0, [('orders',parts)]), add_parts_resp([('orders',parts)]))
    ld.x(t+1000, 'produce', 3, produce_req('tx-a', [('orders', [(p, batch_seq(4000,0,3,seq=off)) for p in parts])]), produce_resp([('orders', [(p,0,100+off) for p in parts])]))
one(T+3000, [0,1], 0)
c, q = co.req('end_txn', 1, end_txn_req('tx-a', 4000, 0, True)); r = resp_frame(c, end_txn_resp(0))
m = mode.replace('_local', '').replace('_client', '')
if m in ('req', 'both'): co.cseq += len(q)
else: co.send(T+5000, q)
if m in ('resp', 'both'): co.sseq += len(r)
else: co.send(T+5100, r, False)
if not local:
    mk.x(T+6000, 'wtm', 0, wtm_req([(4000, 0, True, [('orders',[0,1])], 7)]), wtm_resp([(4000, [('orders', [(0,0),(1,0)])])]), cid='broker-0-txn-marker-sender')
one(T+1_000_000, [0], 3)
co.x(T+1_005_000, 'end_txn', 1, end_txn_req('tx-a', 4000, 0, True), end_txn_resp(0))
if not local:
    mk.x(T+1_006_000, 'wtm', 0, wtm_req([(4000, 0, True, [('orders',[0])], 7)]), wtm_resp([(4000, [('orders', [(0,0)])])]), cid='broker-0-txn-marker-sender')
if mode.endswith('_client'): co.pk(T+90_000_000, True, co.cseq, co.sseq, ACK)
w.close()
