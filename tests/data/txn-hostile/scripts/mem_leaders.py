# Metadata responses: one topic with a 32 KiB name and many partitions -> the view's `leaders`
# map clones the name per partition; held_cost counts 96 bytes per entry.
import sys; sys.path.insert(0, '/tmp/hostile/repro')
from kp import *
nresp = int(sys.argv[2]); nparts = int(sys.argv[3]); namelen = int(sys.argv[4]) if len(sys.argv) > 4 else 32768
p = Pcap(sys.argv[1])
T = 1_767_225_600_000_000
c = Client(p, 40001, 9092, T, 'prod')
for r in range(nresp):
    name = ('t%05d' % r) + 'x' * (namelen - 6)
    c.x(T + r * 1000, 'metadata', 1, metadata_req(), metadata_resp([(0, '127.0.0.1', 9092)], [(name, [(i, 0) for i in range(nparts)])]))
p.close()
