"""A MirrorMaker-like host: it produces transactionally to 'orders' on cluster T (brokers
127.0.0.1-3) and consumes read_committed 'orders' from cluster S (brokers 10.9.9.1-3), whose
offsets are unrelated (S's last stable offset moves from 5000 on). The transaction on T commits
(EndTxn accepted) and no marker is ever seen; on T its partition's LSO is never seen.
mode: other_cluster - S's Fetch only (T's LSO unseen): T's transaction should stay judged as before
      stuck_beside  - T's own Fetch shows orders-0 LSO stuck at 100 while orders-1 moves (same cluster)
      backwards     - T's Fetch: LSO 103 (past) then 50 (leader change / truncation) at the end
      before_produce- T's Fetch with LSO 103 observed BEFORE the Produce, topic recreated (first_offset 100)
"""
import sys
from kh import *
w = W(sys.argv[1]); mode = sys.argv[2]; T = T0
SB = [(0,'10.9.9.1',9092),(1,'10.9.9.2',9092),(2,'10.9.9.3',9092)]
co = C(w, '10.0.0.1', 40001, '127.0.0.1', 9092, T)
ld = C(w, '10.0.0.1', 40002, '127.0.0.2', 9092, T)
src = C(w, '10.0.0.1', 40005, '10.9.9.2', 9092, T)
tcon = C(w, '10.0.0.1', 40006, '127.0.0.2', 9092, T)
src.x(T+500, 'metadata', 1, metadata_req(), metadata_resp(SB, [('orders', [(0,1),(1,1)])]), cid='mm2-consumer')
co.x(T+1000, 'metadata', 1, metadata_req(), metadata_resp(BROKERS, [('orders', [(0,1),(1,1)])]))
if mode == 'before_produce':
    tcon.x(T+1500, 'fetch', 4, fetch_req([('orders',[0])], 1), fetch_resp([('orders', [(0, 103, 103)])]), cid='c')
co.x(T+2000, 'init_pid', 1, init_pid_req('tx-mm'), init_pid_resp(4000, 0))
co.x(T+3000, 'add_parts', 1, add_parts_req('tx-mm', 4000, 0, [('orders',[0])]), add_parts_resp([('orders',[0])]))
ld.x(T+4000, 'produce', 3, produce_req('tx-mm', [('orders', [(0, batch_seq(4000,0,3))])]), produce_resp([('orders', [(0,0,100)])]))
co.x(T+5000, 'end_txn', 1, end_txn_req('tx-mm', 4000, 0, True), end_txn_resp(0))
for k in range(90):
    t = T+6000 + k*1_000_000
    if mode == 'other_cluster':
        src.x(t, 'fetch', 4, fetch_req([('orders',[0,1])], 1), fetch_resp([('orders', [(0, 5000+k, 5000+k), (1, 7000+k, 7000+k)])]), lat=500, cid='mm2-consumer')
    elif mode == 'stuck_beside':
        tcon.x(t, 'fetch', 4, fetch_req([('orders',[0,1])], 1), fetch_resp([('orders', [(0, 104+k, 100), (1, 300+k, 300+k)])]), lat=500, cid='c')
    elif mode == 'backwards':
        l = 103 if k < 80 else 50
        tcon.x(t, 'fetch', 4, fetch_req([('orders',[0])], 1), fetch_resp([('orders', [(0, 104+k if k<80 else 60, l)])]), lat=500, cid='c')
    elif mode == 'before_produce':
        co.pk(t, True, co.cseq, co.sseq, ACK)
w.close()
