import sys; sys.path.insert(0, __import__('os').path.dirname(__import__('os').path.abspath(__file__)))
from wm_gen import *
from wm_scen import Client
def s_end_error(name, err=48):  # INVALID_TXN_STATE
    pc = Pcap(); tid='tx-e'; pid=9000; ep=1
    c = Client(pc, 40000, 0)
    c.x(3, 1, metadata_req(['t0']), metadata_resp(BROKERS, 0, {'t0': {0: 0}}))
    c.x(10, 1, findcoord_req(tid), findcoord_resp(0, '10.0.0.1', 9092))
    c.x(22, 1, initpid_req(tid, 1000), initpid_resp(pid, ep))
    c.x(24, 1, addparts_req(tid, pid, ep, {'t0':[0]}), addparts_resp({'t0':[0]}))
    p = Client(pc, 40001, 0)
    p.x(0, 3, produce_req(tid, {'t0': {0: batch(pid, ep, 0, 3)}}), produce_resp({'t0':[0]}))
    c.x(26, 1, endtxn_req(tid, pid, ep, True), endtxn_resp(err))
    open(name, 'wb').write(pc.bytes())

def s_timeout(name):  # open, then 20 s of other traffic (timeout 1 s)
    pc = Pcap(); tid='tx-t'; pid=9100; ep=1
    c = Client(pc, 40000, 0)
    c.x(3, 1, metadata_req(['t0']), metadata_resp(BROKERS, 0, {'t0': {0: 0, 1: 1}}))
    c.x(10, 1, findcoord_req(tid), findcoord_resp(0, '10.0.0.1', 9092))
    c.x(22, 1, initpid_req(tid, 1000), initpid_resp(pid, ep))
    c.x(24, 1, addparts_req(tid, pid, ep, {'t0':[0,1]}), addparts_resp({'t0':[0,1]}))
    p = Client(pc, 40001, 1)
    p.x(0, 3, produce_req(tid, {'t0': {0: batch(pid, ep, 0, 3), 1: batch(pid, ep, 0, 3)}}), produce_resp({'t0':[0,1]}))
    o = Client(pc, 40002, 2)
    for i in range(30):
        pc.t += 1.0
        o.x(3, 1, metadata_req(['t0']), metadata_resp(BROKERS, 0, {'t0': {0: 0, 1: 1}}))
    open(name, 'wb').write(pc.bytes())

def s_coord_move(name):
    # txn1: coordinator node 0, p0 led by 0 (local), p1 by 1 (wtm). then coordinator moves to node 1;
    # txn2 on coordinator 1, p1 led by 1 (local), p0 led by 0 -> wtm from node1 to node0.
    pc = Pcap(); tid='tx-m'; pid=9200; ep=1
    c = Client(pc, 40000, 0)
    c.x(3, 1, metadata_req(['t0']), metadata_resp(BROKERS, 0, {'t0': {0: 0, 1: 1}}))
    c.x(10, 1, findcoord_req(tid), findcoord_resp(0, '10.0.0.1', 9092))
    c.x(22, 1, initpid_req(tid), initpid_resp(pid, ep))
    c.x(24, 1, addparts_req(tid, pid, ep, {'t0':[0,1]}), addparts_resp({'t0':[0,1]}))
    p = Client(pc, 40001, 1)
    p.x(0, 3, produce_req(tid, {'t0': {0: batch(pid, ep, 0, 3), 1: batch(pid, ep, 0, 3)}}), produce_resp({'t0':[0,1]}))
    c.x(26, 1, endtxn_req(tid, pid, ep, True), endtxn_resp())
    w = Conn(pc, '10.0.0.1', 50000, '10.0.0.2', 9092)
    w.send(True, req(27, 0, 1, 'coord0', wtm_req([(pid, ep, True, {'t0':[1]}, 0)])))
    w.send(False, resp(1, wtm_resp([(pid, {'t0':[1]})])))
    # coordinator moves
    c.x(24, 1, addparts_req(tid, pid, ep, {'t0':[0,1]}), addparts_resp({'t0':[0,1]}, err=16))  # NOT_COORDINATOR
    c.x(10, 1, findcoord_req(tid), findcoord_resp(1, '10.0.0.2', 9092))
    c2 = Client(pc, 40003, 1)
    c2.x(24, 1, addparts_req(tid, pid, ep, {'t0':[0,1]}), addparts_resp({'t0':[0,1]}))
    p.x(0, 3, produce_req(tid, {'t0': {0: batch(pid, ep, 3, 3), 1: batch(pid, ep, 3, 3)}}), produce_resp({'t0':[0,1]}))
    c2.x(26, 1, endtxn_req(tid, pid, ep, False), endtxn_resp())
    w2 = Conn(pc, '10.0.0.2', 50001, '10.0.0.1', 9092)
    w2.send(True, req(27, 0, 1, 'coord1', wtm_req([(pid, ep, False, {'t0':[0]}, 1)])))
    w2.send(False, resp(1, wtm_resp([(pid, {'t0':[0]})])))
    open(name, 'wb').write(pc.bytes())
s_end_error('s-enderr.pcap'); s_timeout('s-timeout.pcap'); s_coord_move('s-coordmove.pcap')
