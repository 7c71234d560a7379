# As s3, but both COMMIT requests are sent before either is answered.
import sys; sys.path.insert(0, 'tests/data/txn-hostile/scripts')
from kp import *
p = Pcap(sys.argv[1])
T = 1_767_225_600_000_000
b = Client(p, 40009, 9093, T, 'broker-0-txn-marker-sender', cip='127.0.0.1', sip='127.0.0.2')
d = Client(p, 40010, 9094, T, 'broker-0-txn-marker-sender', cip='127.0.0.1', sip='127.0.0.3')
b.conn.send(T+7000, req_frame(27, 0, 0, b.client_id, wtm_req([(4000, 0, True, [('orders',[0])], 5)])))
d.conn.send(T+7000, req_frame(27, 0, 0, d.client_id, wtm_req([(4000, 0, True, [('orders',[1])], 5)])))
b.conn.send(T+7100, resp_frame(0, wtm_resp([(4000, [('orders', [(0, 0)])])])), to_server=False)
# orders 1's response not captured
d.conn.send(T+2_000_000, req_frame(27, 0, 1, d.client_id, wtm_req([(4000, 0, False, [('orders',[1])], 5)])))
d.conn.send(T+2_000_100, resp_frame(1, wtm_resp([(4000, [('orders', [(1, 0)])])])), to_server=False)
p.close()
