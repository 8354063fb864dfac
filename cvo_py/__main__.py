from cvo_py.cli.main import entry

entry()
