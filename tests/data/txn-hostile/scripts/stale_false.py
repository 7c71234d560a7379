# Two transactional producers whose transactional ids live on different __transaction_state
# partitions (coordinator epochs 7 and 3) both write to orders-0; Kafka checks the coordinator
# epoch per producer id, so neither marker is stale.
import sys; sys.path.insert(0, '/tmp/hostile/repro')
from kp import *
p = Pcap(sys.argv[1])
T = 1_767_225_600_000_000
m0 = Client(p, 40003, 9093, T, 'broker-0-txn-marker-sender', cip='127.0.0.1')
m0.x(T + 1000, 'wtm', 0, wtm_req([(4000, 0, True, [('orders', [0])], 7)]), wtm_resp([(4000, [('orders', [(0, 0)])])]))
m2 = Client(p, 40004, 9093, T, 'broker-2-txn-marker-sender', cip='127.0.0.3')
m2.x(T + 2000, 'wtm', 0, wtm_req([(5000, 0, True, [('orders', [0])], 3)]), wtm_resp([(5000, [('orders', [(0, 0)])])]))
p.close()
