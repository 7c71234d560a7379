# TV2: one leader adds the partitions of two producers' transactions in one
# AddPartitionsToTxn v5 (verify_only false, as a Kafka 4 leader does for a Produce's first
# batch); the coordinator answers by transactional id, here tx-b first (its results come as
# each transaction's append completes): tx-b CONCURRENT_TRANSACTIONS, tx-a NONE.
# tx-a had no error; tx-b had CONCURRENT_TRANSACTIONS.
import sys; sys.path.insert(0, __import__('os').path.dirname(__file__))
from kp2 import *
p = Pcap(sys.argv[1])
a = Client(p, 40001, 9092, T, 'prod-a')
a.x(T+1000, 'init_pid', 1, init_pid_req('tx-a', 60000), init_pid_resp(4000, 0))
bq = Client(p, 40003, 9092, T, 'prod-b', cip='10.0.0.2')
bq.x(T+1500, 'init_pid', 1, init_pid_req('tx-b', 60000), init_pid_resp(5000, 0))
la = Client(p, 40002, 9092, T, 'prod-a', sip='127.0.0.2')
lbq = Client(p, 40004, 9092, T, 'prod-b', cip='10.0.0.2', sip='127.0.0.2')
fa = la.conn.send(T+2000, req_frame(0, 3, 0, 'prod-a', produce_req('tx-a', [('orders', [(0, batch_seq(4000, 0, 3, 0))])])))
fb = lbq.conn.send(T+2001, req_frame(0, 3, 0, 'prod-b', produce_req('tx-b', [('orders', [(1, batch_seq(5000, 0, 2, 0))])])))
ld = Client(p, 40020, 9092, T, 'broker-1', cip='127.0.0.2', sip='127.0.0.1')
ld.x(T+2100, 'add_parts', 5, add_parts_req4([('tx-a', 4000, 0, False, [('orders', [0])]), ('tx-b', 5000, 0, False, [('orders', [1])])]),
     add_parts_resp4([('tx-b', [('orders', [(1, 51)])]), ('tx-a', [('orders', [(0, 0)])])]), flexible=True)
la.conn.send(T+2300, resp_frame(0, produce_resp([('orders', [(0, 0, 100)])])), to_server=False)
lbq.conn.send(T+2300, resp_frame(0, produce_resp([('orders', [(1, 51, -1)])])), to_server=False)
p.close()
