import sys

from gpuav.demo.app import main

sys.exit(main())
