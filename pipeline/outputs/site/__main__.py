from pipeline.outputs.site import main

raise SystemExit(main())
