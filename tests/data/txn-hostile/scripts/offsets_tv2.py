"""From a hostile review: a consume-transform-produce transaction under transaction version 2 (Kafka 4.0
clients: no AddOffsetsToTxn, the TxnOffsetCommit v5 adds the group's __consumer_offsets partition
implicitly; EndTxn v5). Group my-group -> __consumer_offsets 12 of 50, led by node 2. Its COMMIT
marker (WriteTxnMarkers v2, TV2, epoch 1) goes to orders 0 (node 1) only; __consumer_offsets 12 never
gets one in 40 s. mode: tv2 | tv1late (TV1, AddOffsetsToTxn, but the __consumer_offsets Metadata
comes after the AddOffsetsToTxn)"""
import sys
from kp import *
p = Pcap(sys.argv[1]); mode = sys.argv[2]
T = 1_767_225_600_000_000
G = 'my-group'; REAL = 12
BR = [(0,'127.0.0.1',9092),(1,'127.0.0.1',9093),(2,'127.0.0.1',9094)]
offs = [(i, 2 if i == REAL else 0) for i in range(50)]
def toc5_req(tid, group, pid, epoch, topics):
    return (cs(tid) + cs(group) + i64(pid) + i16(epoch) + i32(-1) + cs('') + cns(None) +
            carr(topics, lambda t: cs(t[0]) + carr(t[1], lambda q: i32(q[0]) + i64(q[1]) + i32(-1) + cns(None) + TAG0) + TAG0) + TAG0)
def toc5_resp(topics, err=0):
    return i32(0) + carr(topics, lambda t: cs(t[0]) + carr(t[1], lambda q: i32(q) + i16(err) + TAG0) + TAG0) + TAG0
c = Client(p, 40001, 9092, T, 'prod')
c.x(T+1000, 'find_coord', 0, find_coord_req('tx'), find_coord_resp(0, '127.0.0.1', 9092))
md = [('orders', [(0,1)]), ('__consumer_offsets', offs)]
if mode == 'tv2':
    c.x(T+2000, 'metadata', 1, metadata_req(), metadata_resp(BR, md))
else:
    c.x(T+2000, 'metadata', 1, metadata_req(), metadata_resp(BR, [('orders', [(0,1)])]))
c.x(T+3000, 'init_pid', 1, init_pid_req('tx'), init_pid_resp(4000, 0))
if mode != 'tv2':
    c.x(T+4000, 'add_parts', 1, add_parts_req('tx', 4000, 0, [('orders',[0])]), add_parts_resp([('orders',[0])]))
l = Client(p, 40002, 9093, T, 'prod')
l.x(T+5000, 'produce', 3, produce_req('tx', [('orders', [(0, batch(4000, 0, 3))])]), produce_resp([('orders', [(0, 0, 100)])]))
g = Client(p, 40005, 9094, T, 'prod')
if mode == 'tv2':
    g.x(T+5700, 'txn_offset_commit', 5, toc5_req('tx', G, 4000, 0, [('in', [(0, 42)])]), toc5_resp([('in', [0])]), flexible=True)
    c.x(T+6000, 'end_txn', 5, end_txn_req5('tx', 4000, 0, True), end_txn_resp5(0, 4000, 1), flexible=True)
    m = Client(p, 40003, 9093, T, 'broker-0-txn-marker-sender', cip='127.0.0.1')
    m.x(T+7000, 'wtm', 2, wtm_req_flex([(4000, 1, True, [('orders',[0])], 7, 2)], v2=True), wtm_resp_flex([(4000, [('orders', [(0,0)])])]), flexible=True)
else:
    c.x(T+5500, 'add_offsets', 0, add_offsets_req('tx', 4000, 0, G), add_offsets_resp(0))
    c.x(T+5600, 'metadata', 1, metadata_req(), metadata_resp(BR, md))
    g.x(T+5700, 'txn_offset_commit', 0, txn_offset_commit_req('tx', G, 4000, 0, [('in', [(0, 42)])]), txn_offset_commit_resp([('in', [(0,)])]))
    c.x(T+6000, 'end_txn', 1, end_txn_req('tx', 4000, 0, True), end_txn_resp(0))
    m = Client(p, 40003, 9093, T, 'broker-0-txn-marker-sender', cip='127.0.0.1')
    m.x(T+7000, 'wtm', 0, wtm_req([(4000, 0, True, [('orders',[0])], 7)]), wtm_resp([(4000, [('orders', [(0,0)])])]))
c.x(T+40_000_000, 'metadata', 1, metadata_req(['orders']), metadata_resp(BR, [('orders', [(0,1)])]))
p.close()
