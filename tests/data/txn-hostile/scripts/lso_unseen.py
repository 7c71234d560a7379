"""From a hostile review: a transaction with no EndTxn seen (timeout 10 s) on orders 0 and 1, and a read_committed
consumer's Fetch responses. mode: one_of_two (orders 0's last stable offset passes its batch, orders 1's stays at its
first batch for 90 s: ended unseen, and orders 1 hangs) | next_txn (one partition; the same producer's next transaction,
same epoch, adds it again and writes at 110: the two are one transaction to the view, and a last stable offset of 105,
past the first batch only, for 30 s does not end it: it hangs) | hostname (Metadata names the brokers by host name, as in
Kubernetes; both partitions' offsets pass: ended unseen, the leader's address not comparable with the Fetch's) |
watched_early and watched_late (one partition; the consumer's Fetch responses give its offset from before the batch on,
every second: 90 below it, then passing it 3 s (early: before the timeout) or 25 s (late) after the transaction began,
then moving on each second: its stable_past_frame is the first to pass it, not the last change)"""
import sys
from kh import *
w = W(sys.argv[1]); mode = sys.argv[2]; T = T0
co = C(w, '10.0.0.1', 40001, '127.0.0.1', 9092, T)
ld = C(w, '10.0.0.1', 40002, '127.0.0.2', 9092, T)
cs_ = C(w, '10.0.0.1', 40005, '127.0.0.2', 9092, T)
parts = [0] if mode in ('next_txn', 'watched_early', 'watched_late') else [0, 1]
brokers = [(0, 'kafka-0.kafka', 9092), (1, 'kafka-1.kafka', 9092), (2, 'kafka-2.kafka', 9092)] if mode == 'hostname' else BROKERS
co.x(T+1000, 'metadata', 1, metadata_req(), metadata_resp(brokers, [('orders', [(p, 1) for p in parts])]))
co.x(T+2000, 'init_pid', 1, init_pid_req('tx-a', 10000), init_pid_resp(4000, 0))
co.x(T+3000, 'add_parts', 1, add_parts_req('tx-a', 4000, 0, [('orders', parts)]), add_parts_resp([('orders', parts)]))
if mode in ('one_of_two', 'hostname'):
    ld.x(T+4000, 'produce', 3, produce_req('tx-a', [('orders', [(0, batch_seq(4000,0,3)), (1, batch_seq(4000,0,2))])]), produce_resp([('orders', [(0,0,100),(1,0,200)])]))
    for k in range(90):
        l1 = 200 if mode == 'one_of_two' else 210 + k
        cs_.x(T+6000 + k*1_000_000, 'fetch', 4, fetch_req([('orders',[0,1])], 1), fetch_resp([('orders', [(0, 120+k, 110+k), (1, 220+k, l1)])]), lat=500)
elif mode in ('watched_early', 'watched_late'):
    # Fetches from before the batch on (offset 90), the batch at 100-102, the offset passing it
    # at second `at` (k == at), then moving each second.
    at = 3 if mode == 'watched_early' else 25
    cs_.x(T+1500, 'fetch', 4, fetch_req([('orders',[0])], 1), fetch_resp([('orders', [(0, 95, 90)])]), lat=500)
    ld.x(T+4000, 'produce', 3, produce_req('tx-a', [('orders', [(0, batch_seq(4000,0,3))])]), produce_resp([('orders', [(0,0,100)])]))
    for k in range(1, 40):
        lso = 100 if k < at else 103 + k
        cs_.x(T+4000 + k*1_000_000, 'fetch', 4, fetch_req([('orders',[0])], 1), fetch_resp([('orders', [(0, 110+k, lso)])]), lat=500)
else:
    ld.x(T+4000, 'produce', 3, produce_req('tx-a', [('orders', [(0, batch_seq(4000,0,3))])]), produce_resp([('orders', [(0,0,100)])]))
    co.x(T+500_000, 'add_parts', 1, add_parts_req('tx-a', 4000, 0, [('orders',[0])]), add_parts_resp([('orders',[0])]))
    ld.x(T+600_000, 'produce', 3, produce_req('tx-a', [('orders', [(0, batch_seq(4000,0,1,seq=3))])]), produce_resp([('orders', [(0,0,110)])]))
    for k in range(30):
        cs_.x(T+700_000 + k*1_000_000, 'fetch', 4, fetch_req([('orders',[0])], 1), fetch_resp([('orders', [(0, 120+k, 105)])]), lat=500)
w.close()
