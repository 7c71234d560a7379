from kp import *
def batch_seq(pid, epoch, nrec=1, seq=0, transactional=True, base_offset=0):
    attrs = (0x10 if transactional else 0)
    body = i32(0) + i8(2)
    after_crc = i16(attrs) + i32(nrec - 1) + i64(0) + i64(0) + i64(pid) + i16(epoch) + i32(seq) + i32(nrec)
    body += u32(0) + after_crc
    return i64(base_offset) + i32(len(body)) + body
T = 1_767_225_600_000_000
def meta(p, leaders, brokers=((0,'127.0.0.1',9092),(1,'127.0.0.2',9093),(2,'127.0.0.3',9094)), port=40000, t=None):
    md = Client(p, port, 9092, T if t is None else t, 'prod')
    md.x((T if t is None else t)+1000, 'metadata', 1, metadata_req(), metadata_resp(list(brokers), leaders))
    return md
# AddPartitionsToTxn v4 (a leader's, flexible): txns = [(tid, pid, epoch, verify, [(topic,[parts])])]
def add_parts_req4(txns):
    def tx(t):
        return cs(t[0]) + i64(t[1]) + i16(t[2]) + boolean(t[3]) + carr(t[4], lambda x: cs(x[0]) + carr(x[1], i32) + TAG0) + TAG0
    return carr(txns, tx) + TAG0
# results = [(tid, [(topic, [(part, err)])])]
def add_parts_resp4(results, err=0):
    def res(r):
        return cs(r[0]) + carr(r[1], lambda t: cs(t[0]) + carr(t[1], lambda p: i32(p[0]) + i16(p[1]) + TAG0) + TAG0) + TAG0
    return i32(0) + i16(err) + carr(results, res) + TAG0
