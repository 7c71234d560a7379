import sys; sys.path.insert(0, __import__('os').path.dirname(__import__('os').path.abspath(__file__)))
from wm_gen import *

def client_conn(pc, port, broker=0):
    return Conn(pc, '10.0.1.1', port, BROKERS[broker][1], 9092)

class Client:
    def __init__(self, pc, port, broker=0, cid='cli'):
        self.c = client_conn(pc, port, broker); self.corr = 0; self.cid = cid
    def x(self, key, ver, body, rbody, drop_req=False, drop_resp=False, no_resp=False):
        self.corr += 1
        self.c.send(True, req(key, ver, self.corr, self.cid, body), drop=drop_req)
        if not no_resp:
            self.c.send(False, resp(self.corr, rbody), drop=drop_resp)

def scenario(name, metadata=[{'t0': {0: 0, 1: 1}}], coord_known=True, n_produce=1, commit=True,
             end=True, wtm=True, wtm_drop_req=False, wtm_parts=None, meta_after=None, pid=7000, epoch=1, tid='tx-1', extra_tx=0, mss=1400):
    pc = Pcap()
    c = Client(pc, 40000, 0)
    for md in metadata:
        c.x(3, 1, metadata_req(list(md)), metadata_resp(BROKERS, 0, md))
    if coord_known:
        c.x(10, 1, findcoord_req(tid), findcoord_resp(0, '10.0.0.1', 9092))
    c.x(22, 1, initpid_req(tid), initpid_resp(pid, epoch))
    parts = {'t0': [0, 1]}
    c.x(24, 1, addparts_req(tid, pid, epoch, parts), addparts_resp(parts))
    p1 = Client(pc, 40001, 1)  # produce to broker 1 (leader of p1) -- and p0 too for simplicity
    seq = 0
    for i in range(n_produce):
        b = {'t0': {0: batch(pid, epoch, seq, 2), 1: batch(pid, epoch, seq, 2)}}
        seq += 2
        p1.x(0, 3, produce_req(tid, b), produce_resp({'t0': [0, 1]}, base=i*2))
    if meta_after:
        for md in meta_after:
            c.x(3, 1, metadata_req(list(md)), metadata_resp(BROKERS, 0, md))
    if end:
        c.x(26, 1, endtxn_req(tid, pid, epoch, commit), endtxn_resp())
    if end and wtm:
        w = Conn(pc, '10.0.0.1', 50000, '10.0.0.2', 9092)
        wp = wtm_parts or {'t0': [1]}
        w.send(True, req(27, 0, 1, 'coord', wtm_req([(pid, epoch, commit, wp, 0)])), drop=wtm_drop_req)
        w.send(False, resp(1, wtm_resp([(pid, wp)])))
    open(name, 'wb').write(pc.bytes())

if __name__ == '__main__':
    scenario('s-basic.pcap')
    scenario('s-nometa.pcap', metadata=[])
    scenario('s-nocoord.pcap', coord_known=False)
    # leader of p0 moves from coordinator (0) to node 1 after the produce; no marker for p0 on wire
    scenario('s-leader-away.pcap', meta_after=[{'t0': {0: 1, 1: 1}}])
    # leader of p1 moves to coordinator after; marker for p1 was on wire to broker 1 anyway
    scenario('s-leader-to-coord.pcap', metadata=[{'t0': {0: 1, 1: 1}}], meta_after=[{'t0': {0: 0, 1: 1}}], wtm_parts={'t0':[1]})
    # open transaction: no EndTxn
    scenario('s-open.pcap', end=False)
    # WTM request lost (response only)
    scenario('s-wtm-lost.pcap', wtm_drop_req=True)
    # WTM covers both partitions incl the coordinator-led one
    scenario('s-wtm-both.pcap', wtm_parts={'t0':[0,1]})
    # aborted
    scenario('s-abort.pcap', commit=False)
    # huge transaction: 1100 produce
    scenario('s-big.pcap', n_produce=1100)
