"""TV1 producer, one transaction: AddPartitionsToTxn(orders 0) whose response the capture lost
(bytes counted, not written); the client retries the same AddPartitionsToTxn on the same
connection (its first answer was CONCURRENT_TRANSACTIONS, retriable; or it timed out),
accepted; Produce; EndTxn commit; COMMIT markers written. Expected: ONE committed transaction.
mode: resp_lost   - the first add's response lost (server->client gap)
      req_lost_md - an unrelated Metadata exchange on the coordinator connection lost between
                    the accepted add and a retried add (client re-sends the add after a
                    NOT_COORDINATOR? no: same partitions)
      two_prod    - two producers (pids 4000/4001) share the coordinator connection; pid 4001's
                    bytes lost; pid 4000 legitimately adds orders 1 then... (checks only pid 4000's)
      leader_gap  - the gap is on the leader connection (Produce lost), then retry add on coordinator
"""
import sys
from kh import *
w = W(sys.argv[1]); mode = sys.argv[2]; T = T0
co = C(w, '10.0.0.1', 40001, '127.0.0.1', 9092, T)
ld = C(w, '10.0.0.1', 40002, '127.0.0.2', 9092, T)
mk = C(w, '127.0.0.1', 40003, '127.0.0.2', 9092, T)
MS = 'broker-0-txn-marker-sender'
co.x(T+1000, 'metadata', 1, metadata_req(), metadata_resp(BROKERS, [('orders', [(0,1),(1,1)])]))
co.x(T+2000, 'init_pid', 1, init_pid_req('tx-a'), init_pid_resp(4000, 0))
O0 = [('orders',[0])]
if mode == 'resp_lost':
    c, q = co.req('add_parts', 1, add_parts_req('tx-a', 4000, 0, O0))
    co.send(T+3000, q)
    co.sseq += len(resp_frame(c, add_parts_resp(O0, err=51)))   # lost
    co.x(T+3200, 'add_parts', 1, add_parts_req('tx-a', 4000, 0, O0), add_parts_resp(O0))
elif mode == 'resp_lost_md':
    # add answered CONCURRENT_TRANSACTIONS (response lost); a Metadata exchange captured on the
    # same connection during the retry backoff; the retried add accepted
    c, q = co.req('add_parts', 1, add_parts_req('tx-a', 4000, 0, O0))
    co.send(T+3000, q)
    co.sseq += len(resp_frame(c, add_parts_resp(O0, err=51)))   # lost
    for k in range(2): co.x(T+3010+k*10, 'metadata', 1, metadata_req(['orders']), metadata_resp(BROKERS, [('orders', [(0,1),(1,1)])]))
    co.x(T+3200, 'add_parts', 1, add_parts_req('tx-a', 4000, 0, O0), add_parts_resp(O0))
elif mode == 'burst':
    # add(orders 0) captured; a burst of drops loses its response (CONCURRENT_TRANSACTIONS,
    # retriable) and a Metadata exchange the client sent during its retry backoff; the retried
    # add(orders 0) is captured and accepted. One transaction.
    c, q = co.req('add_parts', 1, add_parts_req('tx-a', 4000, 0, O0))
    co.send(T+3000, q)
    co.sseq += len(resp_frame(c, add_parts_resp(O0, err=51)))   # lost
    c, q = co.req('metadata', 1, metadata_req(['orders']))
    co.cseq += len(q); co.sseq += len(resp_frame(c, metadata_resp(BROKERS, [('orders', [(0,1),(1,1)])])))
    co.x(T+3200, 'add_parts', 1, add_parts_req('tx-a', 4000, 0, O0), add_parts_resp(O0))
elif mode == 'req_lost_md':
    co.x(T+3000, 'add_parts', 1, add_parts_req('tx-a', 4000, 0, O0), add_parts_resp(O0))
    c, q = co.req('metadata', 1, metadata_req(['orders']))
    co.cseq += len(q); co.sseq += len(resp_frame(c, metadata_resp(BROKERS, [('orders', [(0,1)])])))
    # a retried add (its first response CONCURRENT_TRANSACTIONS captured)
    co.x(T+3100, 'add_parts', 1, add_parts_req('tx-a', 4000, 0, O0), add_parts_resp(O0))
elif mode == 'leader_gap':
    co.x(T+3000, 'add_parts', 1, add_parts_req('tx-a', 4000, 0, O0), add_parts_resp(O0))
    c, q = ld.req('produce', 3, produce_req('tx-a', [('orders', [(0, batch_seq(4000,0,1))])]))
    ld.cseq += len(q); ld.sseq += len(resp_frame(c, produce_resp([('orders', [(0,0,99)])])))
    co.x(T+3100, 'add_parts', 1, add_parts_req('tx-a', 4000, 0, O0), add_parts_resp(O0))
ld.x(T+4000, 'produce', 3, produce_req('tx-a', [('orders', [(0, batch_seq(4000,0,3,seq=1))])]), produce_resp([('orders', [(0,0,100)])]))
co.x(T+5000, 'end_txn', 1, end_txn_req('tx-a', 4000, 0, True), end_txn_resp(0))
mk.x(T+6000, 'wtm', 0, wtm_req([(4000, 0, True, O0, 7)]), wtm_resp([(4000, [('orders', [(0,0)])])]), cid=MS)
w.close()
