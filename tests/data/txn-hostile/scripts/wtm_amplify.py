# Memory: WriteTxnMarkers requests just under 64 KiB, each with 15 markers of new producer
# ids, each marker naming 1,000 partitions of topic "t" (4 bytes a partition on the wire);
# each answered with an empty marker list. All within one capture second.
# usage: wtm_amplify.py OUT N [markers_per_req] [parts]
import sys; sys.path.insert(0, __import__('os').path.dirname(__file__))
from kp2 import *
out, n = sys.argv[1], int(sys.argv[2])
per = int(sys.argv[3]) if len(sys.argv) > 3 else 15
parts = int(sys.argv[4]) if len(sys.argv) > 4 else 1000
p = Pcap(out)
b = Client(p, 40009, 9092, T, 'broker-0-txn-marker-sender', cip='127.0.0.1', sip='127.0.0.2')
pid = 1000
for i in range(n):
    ms = []
    for j in range(per):
        ms.append((pid, 0, True, [('t', list(range(parts)))], 5)); pid += 1
    req = wtm_req(ms)
    b.x(T + 1000 + i, 'wtm', 0, req, wtm_resp([]), latency=0)
p.close()
print(len(req))
