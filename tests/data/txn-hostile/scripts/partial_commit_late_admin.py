# TV1 partial commit (as partial_commit_admin_abort.py), but one unrelated Metadata exchange
# comes at +30 s (any real capture has such traffic) before the admin's ABORT at +60 s.
import sys; sys.path.insert(0, 'tests/data/txn-hostile/scripts')
from kp import *
p = Pcap(sys.argv[1])
mode = sys.argv[2] if len(sys.argv) > 2 else 'noresp'
T = 1_767_225_600_000_000
c = Client(p, 40001, 9092, T, 'prod')
c.x(T+1000, 'metadata', 1, metadata_req(['orders']), metadata_resp([(0,'127.0.0.1',9092),(1,'127.0.0.2',9093),(2,'127.0.0.3',9094)], [('orders', [(0,1),(1,2)])]))
c.x(T+2000, 'find_coord', 0, find_coord_req('tx'), find_coord_resp(0, '127.0.0.1', 9092))
c.x(T+3000, 'init_pid', 1, init_pid_req('tx', 60000), init_pid_resp(4000, 0))
c.x(T+4000, 'add_parts', 1, add_parts_req('tx', 4000, 0, [('orders',[0, 1])]), add_parts_resp([('orders',[0, 1])]))
c.x(T+5000, 'produce', 3, produce_req('tx', [('orders', [(0, batch(4000, 0, 3)), (1, batch(4000, 0, 2))])]), produce_resp([('orders', [(0, 0, 100), (1, 0, 200)])]))
c.x(T+6000, 'end_txn', 1, end_txn_req('tx', 4000, 0, True), end_txn_resp(0))
b = Client(p, 40009, 9093, T+7000, 'broker-0-txn-marker-sender', cip='127.0.0.1', sip='127.0.0.2')
b.x(T+7000, 'wtm', 0, wtm_req([(4000, 0, True, [('orders',[0])], 5)]), wtm_resp([(4000, [('orders', [(0, 0)])])]))
d = Client(p, 40010, 9094, T+7000, 'broker-0-txn-marker-sender', cip='127.0.0.1', sip='127.0.0.3')
if mode == 'noresp':
    d.x(T+7000, 'wtm', 0, wtm_req([(4000, 0, True, [('orders',[1])], 5)]), None)
else:  # terminal error: TRANSACTION_COORDINATOR_FENCED (52)
    d.x(T+7000, 'wtm', 0, wtm_req([(4000, 0, True, [('orders',[1])], 5)]), wtm_resp([(4000, [('orders', [(1, 52)])])]))
# unrelated traffic
o = Client(p, 40020, 9092, T+30_000_000, 'other')
o.x(T+30_000_000, 'metadata', 1, metadata_req(['other']), metadata_resp([(0,'127.0.0.1',9092)], [('other', [(0,0)])]))
a = Client(p, 40011, 9094, T+60_000_000, 'adminclient-1', cip='127.0.0.9', sip='127.0.0.3')
a.x(T+60_000_000, 'wtm', 0, wtm_req([(4000, 0, False, [('orders',[1])], 5)]), wtm_resp([(4000, [('orders', [(1, 0)])])]))
p.close()
