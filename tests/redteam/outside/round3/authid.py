# Goal 2: the superuser's SCRAM verifier, to check offline whether the password read from a
# standby's primary_conninfo (replica_recon.py) is the superuser's in every scenario's golden
import sys, os; exec(open("/tmp/attack3/work/lib.py").read())
out("authid", rows(sql("SELECT rolname, rolpassword, rolvaliduntil FROM pg_authid WHERE rolcanlogin")))
