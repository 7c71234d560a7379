# TV1: a transaction (timeout 2 s) with data on orders 0, led by node 0 = its coordinator
# (Metadata + FindCoordinator), left open; the capture ends at +END s (argv[2], 13 by default),
# past timeout + 10 s sweep. The coordinator's timeout abort writes the ABORT marker to orders 0
# locally (no WriteTxnMarkers on the wire), so nothing on the wire can show it ended.
import sys; sys.path.insert(0, 'tests/data/txn-hostile/scripts')
from kp import *
p = Pcap(sys.argv[1])
end = float(sys.argv[2]) if len(sys.argv) > 2 else 13.0
T = 1_767_225_600_000_000
c = Client(p, 40001, 9092, T, 'prod')
c.x(T+1000, 'metadata', 1, metadata_req(['orders']), metadata_resp([(0, '127.0.0.1', 9092), (1, '127.0.0.2', 9092)], [('orders', [(0, 0)])]))
c.x(T+2000, 'find_coord', 0, find_coord_req('tx'), find_coord_resp(0, '127.0.0.1', 9092))
c.x(T+3000, 'init_pid', 1, init_pid_req('tx', 2000), init_pid_resp(4000, 0))
c.x(T+4000, 'add_parts', 1, add_parts_req('tx', 4000, 0, [('orders',[0])]), add_parts_resp([('orders',[0])]))
c.x(T+5000, 'produce', 3, produce_req('tx', [('orders', [(0, batch(4000, 0, 3))])]), produce_resp([('orders', [(0, 0, 100)])]))
c.x(T+int(end*1_000_000), 'metadata', 1, metadata_req(['orders']), metadata_resp([(0, '127.0.0.1', 9092), (1, '127.0.0.2', 9092)], [('orders', [(0, 0)])]))
p.close()
