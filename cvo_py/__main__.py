from cvo_py.cli.main import main

raise SystemExit(main())
