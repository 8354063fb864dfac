from cvo_py.cli import main

raise SystemExit(main())
