"""From a hostile review: a consume-transform-produce transaction (orders 0, led by node 1, and the offsets of
consumer group GROUP, committed by TxnOffsetCommit), Metadata giving __consumer_offsets 50 partitions. Kafka's group
coordinator puts a group on Utils.abs(groupId.hashCode()) % 50 ("my-group": hash -1906497762, partition 12; "etl":
100765, partition 15), not on the hash with its sign bit cleared (36 for "my-group").
mode: written (the group's partition led by node 2, which gets its COMMIT marker: 2 markers written) | missing (led by
node 2, its marker never comes: hanging, the group's offsets pending) | local (led by node 0, the coordinator, which
writes the marker itself: no message); in every mode the wrong partition (36) is led by node 1."""
import sys
from kp import *
p = Pcap(sys.argv[1]); mode = sys.argv[2]; G = sys.argv[3]
T = 1_767_225_600_000_000
def jh(s):
    x = 0
    b = s.encode('utf-16-be')
    for i in range(0, len(b), 2):
        x = (31*x + int.from_bytes(b[i:i+2], 'big')) & 0xffffffff
    return x - 2**32 if x >= 2**31 else x
h = jh(G); REAL = (0 if h == -2**31 else abs(h)) % 50; WRONG = (h & 0x7fffffff) % 50
lead = 0 if mode == 'local' else 2
BR = [(0,'127.0.0.1',9092),(1,'127.0.0.1',9093),(2,'127.0.0.1',9094)]
c = Client(p, 40001, 9092, T, 'prod')
c.x(T+1000, 'find_coord', 0, find_coord_req('tx'), find_coord_resp(0, '127.0.0.1', 9092))
offs = [(i, lead if i == REAL else (1 if i == WRONG else 0)) for i in range(50)]
c.x(T+2000, 'metadata', 1, metadata_req(), metadata_resp(BR, [('orders', [(0,1)]), ('__consumer_offsets', offs)]))
c.x(T+3000, 'init_pid', 1, init_pid_req('tx'), init_pid_resp(4000, 0))
c.x(T+4000, 'add_parts', 1, add_parts_req('tx', 4000, 0, [('orders',[0])]), add_parts_resp([('orders',[0])]))
l = Client(p, 40002, 9093, T, 'prod')
l.x(T+5000, 'produce', 3, produce_req('tx', [('orders', [(0, batch(4000, 0, 3))])]), produce_resp([('orders', [(0, 0, 100)])]))
c.x(T+5500, 'add_offsets', 0, add_offsets_req('tx', 4000, 0, G), add_offsets_resp(0))
g = Client(p, 40005, 9092 + lead, T, 'prod')
g.x(T+5700, 'txn_offset_commit', 0, txn_offset_commit_req('tx', G, 4000, 0, [('in', [(0, 42)])]), txn_offset_commit_resp([('in', [(0,)])]))
c.x(T+6000, 'end_txn', 1, end_txn_req('tx', 4000, 0, True), end_txn_resp(0))
m = Client(p, 40003, 9093, T, 'broker-0-txn-marker-sender', cip='127.0.0.1')
m.x(T+7000, 'wtm', 0, wtm_req([(4000, 0, True, [('orders',[0])], 7)]), wtm_resp([(4000, [('orders', [(0,0)])])]))
if mode == 'written':
    m2 = Client(p, 40004, 9094, T, 'broker-0-txn-marker-sender', cip='127.0.0.1')
    m2.x(T+7300, 'wtm', 0, wtm_req([(4000, 0, True, [('__consumer_offsets',[REAL])], 7)]), wtm_resp([(4000, [('__consumer_offsets', [(REAL,0)])])]))
# The capture goes on 40 s.
c.x(T+40_000_000, 'metadata', 1, metadata_req(['orders']), metadata_resp(BR, [('orders', [(0,1)])]))
p.close()
