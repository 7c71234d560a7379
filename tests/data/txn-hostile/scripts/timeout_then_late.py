# TV1: a transaction at epoch 3 (timeout 10 s) adds orders 0 and produces; the client stalls.
# 70 s later the coordinator aborts it on its timeout (ABORT marker at the bumped epoch 4,
# answered). 1 s after that the stalled client goes on: MODE 'produce' = a Produce of epoch 3
# to the leader, refused INVALID_PRODUCER_EPOCH (47); 'addparts' = an AddPartitionsToTxn of
# epoch 3 for orders 1, refused 47. No InitProducerId follows: nothing fenced the producer but
# its own timeout.
# Usage: python3 timeout_then_late.py OUT produce|addparts
import sys, os; sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kp2 import *
p = Pcap(sys.argv[1]); mode = sys.argv[2]
c = Client(p, 40001, 9092, T, 'prod')
c.x(T+1000, 'init_pid', 1, init_pid_req('tx', 10000), init_pid_resp(4000, 3))
c.x(T+4000, 'add_parts', 1, add_parts_req('tx', 4000, 3, [('orders',[0])]), add_parts_resp([('orders',[0])]))
l = Client(p, 40002, 9092, T, 'prod', sip='127.0.0.2')
l.x(T+5000, 'produce', 3, produce_req('tx', [('orders', [(0, batch_seq(4000, 3, 3, 0))])]), produce_resp([('orders', [(0, 0, 100)])]))
b = Client(p, 40009, 9092, T+70_000_000, 'broker-0-txn-marker-sender', cip='127.0.0.1', sip='127.0.0.2')
b.x(T+70_000_000, 'wtm', 0, wtm_req([(4000, 4, False, [('orders',[0])], 5)]), wtm_resp([(4000, [('orders', [(0, 0)])])]))
if mode == 'produce':
    l.x(T+71_000_000, 'produce', 3, produce_req('tx', [('orders', [(0, batch_seq(4000, 3, 1, 3))])]), produce_resp([('orders', [(0, 47, -1)])]))
else:
    c.x(T+71_000_000, 'add_parts', 1, add_parts_req('tx', 4000, 3, [('orders',[1])]), add_parts_resp([('orders',[1])], 47))
p.close()
