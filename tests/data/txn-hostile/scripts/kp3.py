# Helpers for Kafka 4.x messages (Metadata v12, FindCoordinator v4, Produce v12/v13 with topic ids,
# AddPartitionsToTxn v3, EndTxn v3), written by hand from the schemas, beside kp.py and kp2.py.
from kp import *
from kp2 import batch_seq, add_parts_req4, add_parts_resp4
def cbytes(b): return b'\x00' if b is None else uvar(len(b)+1) + b
def produce_req12(tid, topics, acks=-1):
    return cns(tid) + i16(acks) + i32(30000) + carr(topics, lambda t: cs(t[0]) + carr(t[1], lambda p: i32(p[0]) + cbytes(p[1]) + TAG0) + TAG0) + TAG0
def produce_resp12(topics):
    return carr(topics, lambda t: cs(t[0]) + carr(t[1], lambda p: i32(p[0]) + i16(p[1]) + i64(p[2]) + i64(-1) + i64(0) + carr([], None) + cns(None) + TAG0) + TAG0) + i32(0) + TAG0
def init_pid_req4(tid, timeout, pid=-1, epoch=-1):
    return init_pid_req3(tid, timeout, pid, epoch)
def uuid(n): return n.to_bytes(16, 'big')
def metadata_req12(topics=None):
    t = b'\x00' if topics is None else carr(topics, lambda x: uuid(0) + cs(x) + TAG0)
    return t + boolean(False) + boolean(False) + TAG0
def metadata_resp12(brokers, topics):  # topics=[(name, id, [(part, leader)])]
    return (i32(0) + carr(brokers, lambda b: i32(b[0]) + cs(b[1]) + i32(b[2]) + cns(None) + TAG0) + cns('cl') + i32(0) +
            carr(topics, lambda t: i16(0) + cs(t[0]) + uuid(t[1]) + boolean(t[0].startswith('__')) +
                 carr(t[2], lambda p: i16(0) + i32(p[0]) + i32(p[1]) + i32(0) + carr([p[1]], i32) + carr([p[1]], i32) + carr([], i32) + TAG0) + i32(-2147483648) + TAG0) + TAG0)
def find_coord_req4(keys, ktype=1):
    return i8(ktype) + carr(keys, cs) + TAG0
def find_coord_resp4(coords):  # [(key,node,host,port)]
    return i32(0) + carr(coords, lambda c: cs(c[0]) + i32(c[1]) + cs(c[2]) + i32(c[3]) + i16(0) + cns(None) + TAG0) + TAG0
def add_parts_req3(tid, pid, epoch, topics):
    return cs(tid) + i64(pid) + i16(epoch) + carr(topics, lambda t: cs(t[0]) + carr(t[1], i32) + TAG0) + TAG0
def add_parts_resp3(topics, err=0):
    return i32(0) + carr(topics, lambda t: cs(t[0]) + carr(t[1], lambda p: i32(p) + i16(err) + TAG0) + TAG0) + TAG0
def end_txn_req3(tid, pid, epoch, commit): return cs(tid) + i64(pid) + i16(epoch) + boolean(commit) + TAG0
def end_txn_resp3(err=0): return i32(0) + i16(err) + TAG0
def init_pid_resp4(pid, epoch, err=0): return init_pid_resp3(pid, epoch, err)
def produce_req13(tid, topics, acks=-1):  # topics=[(uuid_int,[(part, records)])]
    return cns(tid) + i16(acks) + i32(30000) + carr(topics, lambda t: uuid(t[0]) + carr(t[1], lambda p: i32(p[0]) + cbytes(p[1]) + TAG0) + TAG0) + TAG0
def produce_resp13(topics):
    return carr(topics, lambda t: uuid(t[0]) + carr(t[1], lambda p: i32(p[0]) + i16(p[1]) + i64(p[2]) + i64(-1) + i64(0) + carr([], None) + cns(None) + TAG0) + TAG0) + i32(0) + TAG0
