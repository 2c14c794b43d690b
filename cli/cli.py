def main(argv=None):
    import wildtable.protocol, wildtable.server, wildtable.client
    print("ok")
