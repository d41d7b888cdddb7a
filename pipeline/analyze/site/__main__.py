from pipeline.analyze.site import main

raise SystemExit(main())
