# The capture of partial_commit_admin_abort.pcap (TV1: a commit accepted, its COMMIT marker for
# orders 0 written with coordinator_epoch 5, the one for orders 1 never answered), but the
# admin's ABORT for orders 1 carries coordinator_epoch 0, as kafka-transactions.sh abort
# --start-offset sends it when DescribeProducers gave no coordinator epoch for that partition
# (TransactionsCommand.buildAbortSpec: producerState.coordinatorEpoch().orElse(0); a leader
# keeps the coordinator epoch per producer per partition, and orders 1 never had a marker).
import sys; sys.path.insert(0, __import__('os').path.dirname(__file__))
from kp2 import *
p = Pcap(sys.argv[1])
c = Client(p, 40001, 9092, T, 'prod')
c.x(T+3000, 'init_pid', 1, init_pid_req('tx', 60000), init_pid_resp(4000, 0))
c.x(T+4000, 'add_parts', 1, add_parts_req('tx', 4000, 0, [('orders',[0, 1])]), add_parts_resp([('orders',[0, 1])]))
c.x(T+5000, 'produce', 3, produce_req('tx', [('orders', [(0, batch(4000, 0, 3)), (1, batch(4000, 0, 2))])]), produce_resp([('orders', [(0, 0, 100), (1, 0, 200)])]))
c.x(T+6000, 'end_txn', 1, end_txn_req('tx', 4000, 0, True), end_txn_resp(0))
b = Client(p, 40009, 9093, T+7000, 'broker-0-txn-marker-sender', cip='127.0.0.1', sip='127.0.0.2')
b.x(T+7000, 'wtm', 0, wtm_req([(4000, 0, True, [('orders',[0])], 5)]), wtm_resp([(4000, [('orders', [(0, 0)])])]))
d = Client(p, 40010, 9094, T+7000, 'broker-0-txn-marker-sender', cip='127.0.0.1', sip='127.0.0.3')
d.x(T+7000, 'wtm', 0, wtm_req([(4000, 0, True, [('orders',[1])], 5)]), None)
a = Client(p, 40011, 9094, T+60_000_000, 'adminclient-1', cip='127.0.0.9', sip='127.0.0.3')
a.x(T+60_000_000, 'wtm', 0, wtm_req([(4000, 0, False, [('orders',[1])], 0)]), wtm_resp([(4000, [('orders', [(1, 0)])])]))
p.close()
