import sys; sys.path.insert(0, __import__('os').path.dirname(__import__('os').path.abspath(__file__)))
from wm_gen import *
from wm_scen import Client
BROKERS_B = [(0, '10.0.9.1', 9092), (1, '10.0.9.2', 9092)]
def s_two_clusters(name):
    pc = Pcap(); tid='tx-2c'; pid=9300; ep=1
    c = Client(pc, 40000, 0)
    c.x(3, 1, metadata_req(['t0']), metadata_resp(BROKERS, 0, {'t0': {0: 1}}))
    c.x(10, 1, findcoord_req(tid), findcoord_resp(0, '10.0.0.1', 9092))
    c.x(22, 1, initpid_req(tid), initpid_resp(pid, ep))
    c.x(24, 1, addparts_req(tid, pid, ep, {'t0':[0]}), addparts_resp({'t0':[0]}))
    p = Client(pc, 40001, 1)
    p.x(0, 3, produce_req(tid, {'t0': {0: batch(pid, ep, 0, 3)}}), produce_resp({'t0':[0]}))
    # a consumer of another cluster (mirror) asks its own cluster's metadata: t0 p0 led by its node 0
    m = Client(pc, 40005, 0); m.c = Conn(pc, '10.0.1.9', 40005, '10.0.9.1', 9092)
    m.x(3, 1, metadata_req(['t0']), metadata_resp(BROKERS_B, 0, {'t0': {0: 0}}))
    c.x(26, 1, endtxn_req(tid, pid, ep, True), endtxn_resp())
    # marker to node 1 (10.0.0.2) NOT captured at all (capture on client host)
    open(name, 'wb').write(pc.bytes())
s_two_clusters('s-2clusters.pcap')
