# From a README-only trial (2026-12-06): a WriteTxnMarkers response that leaves a partition out.
# Commit of orders 0 and 1 (both led by node 1 at 127.0.0.2:9093; coordinator node 0 at 127.0.0.1:9092).
# The WriteTxnMarkers request names orders 0 and 1; the broker's response lists orders 0 only.
# variants: plain (capture ends 100 ms after), late (another packet 60 s later),
#           fetch (a read_committed consumer fetches orders 1 for 90 s: hw moves, lso stuck at 200),
#           nometa (fetch with no Metadata exchange, and no marker sent for orders 1: whether it
#           hangs is not judged, which --stats says)
import sys; sys.path.insert(0, __import__('os').path.dirname(__file__))
from kp import *
out, v = sys.argv[1], sys.argv[2]
p = Pcap(out); T = 1_767_225_600_000_000
c = Client(p, 40001, 9092, T, 'prod')
if v != 'nometa':
    c.x(T+1000, 'metadata', 1, metadata_req(['orders']), metadata_resp([(0,'127.0.0.1',9092),(1,'127.0.0.2',9093)], [('orders', [(0,1),(1,1)])]))
c.x(T+2000, 'find_coord', 0, find_coord_req('tx'), find_coord_resp(0, '127.0.0.1', 9092))
c.x(T+3000, 'init_pid', 1, init_pid_req('tx', 60000), init_pid_resp(4000, 0))
c.x(T+4000, 'add_parts', 1, add_parts_req('tx', 4000, 0, [('orders',[0, 1])]), add_parts_resp([('orders',[0, 1])]))
l = Client(p, 40002, 9093, T+4500, 'prod', sip='127.0.0.2')
l.x(T+5000, 'produce', 3, produce_req('tx', [('orders', [(0, batch(4000, 0, 3)), (1, batch(4000, 0, 2))])]), produce_resp([('orders', [(0, 0, 100), (1, 0, 200)])]))
c.x(T+6000, 'end_txn', 1, end_txn_req('tx', 4000, 0, True), end_txn_resp(0))
b = Client(p, 40009, 9093, T+7000, 'broker-0-txn-marker-sender', cip='127.0.0.1', sip='127.0.0.2')
b.x(T+7000, 'wtm', 0, wtm_req([(4000, 0, True, [('orders',[0] if v == 'nometa' else [0, 1])], 5)]), wtm_resp([(4000, [('orders', [(0, 0)])])]))
if v == 'late':
    o = Client(p, 40020, 9092, T+60_000_000, 'other')
    o.x(T+60_000_000, 'metadata', 1, metadata_req(['other']), metadata_resp([(0,'127.0.0.1',9092)], [('other', [(0,0)])]))
elif v in ('fetch', 'nometa'):
    f = Client(p, 40030, 9093, T+8000, 'consumer-1', cip='10.0.0.5', sip='127.0.0.2')
    for i in range(10):
        t = T + 8000 + i * 10_000_000
        f.x(t, 'fetch', 4, fetch_req([('orders', [1])]), fetch_resp([('orders', [(1, 202 + 5*i + 1, 200)])]))
p.close()
