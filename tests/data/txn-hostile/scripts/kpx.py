# Helpers on top of kp.py: exchanges the capture lost (their bytes counted in the sequence numbers,
# nothing written), and requests or responses alone.
from kp import *
def lost(cl, api, ver, body, rbody, flexible=False):
    """An exchange on cl's connection whose packets the capture lost (seq advanced, nothing written)."""
    c = cl.corr; cl.corr += 1
    q = req_frame(API[api], ver, c, cl.client_id, body, flexible)
    r = resp_frame(c, rbody, flexible)
    cl.conn.cseq += len(q); cl.conn.sseq += len(r)
def req_only(cl, t, api, ver, body, flexible=False):
    c = cl.corr; cl.corr += 1
    cl.conn.send(t, req_frame(API[api], ver, c, cl.client_id, body, flexible))
    return c
def resp_only(cl, t, corr, rbody, flexible=False):
    cl.conn.send(t, resp_frame(corr, rbody, flexible), to_server=False)
