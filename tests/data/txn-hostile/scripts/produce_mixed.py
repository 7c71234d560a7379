# A Produce of producer 4000 epoch 0 (its first transaction committed) carrying batches for
# orders 0 and orders 1 in one request; the leader refuses orders 0 with INVALID_TXN_STATE (48)
# and accepts orders 1 (offset 500). Argument 'refused_first' | 'accepted_first' decides the
# order of the partitions in the response.
# Usage: python3 produce_mixed.py OUT.pcap refused_first|accepted_first
import sys, os; sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kp2 import *
p = Pcap(sys.argv[1]); mode = sys.argv[2]
c = Client(p, 40001, 9092, T, 'prod')
c.x(T+1000, 'init_pid', 1, init_pid_req('tx'), init_pid_resp(4000, 0))
c.x(T+2000, 'add_parts', 1, add_parts_req('tx', 4000, 0, [('orders',[0])]), add_parts_resp([('orders',[0])]))
c.x(T+3000, 'produce', 3, produce_req('tx', [('orders', [(0, batch_seq(4000, 0, 1, 0))])]), produce_resp([('orders', [(0, 0, 100)])]))
c.x(T+4000, 'end_txn', 1, end_txn_req('tx', 4000, 0, True), end_txn_resp(0))
b = Client(p, 40009, 9092, T+5000, 'broker-0-txn-marker-sender', cip='127.0.0.1', sip='127.0.0.1')
b.x(T+5000, 'wtm', 0, wtm_req([(4000, 0, True, [('orders',[0])], 5)]), wtm_resp([(4000, [('orders', [(0, 0)])])]))
parts = [(0, 48, -1), (1, 0, 500)]
if mode == 'accepted_first': parts.reverse()
c.x(T+9000, 'produce', 3, produce_req('tx', [('orders', [(0, batch_seq(4000, 0, 1, 1)), (1, batch_seq(4000, 0, 1, 0))])]), produce_resp([('orders', parts)]))
p.close()
