"""Entry point of the log cleaner's child process (see ``cleaner_job.run_in_process``)."""

import sys

from pykafkad.log.cleaner_job import child_main

if __name__ == "__main__":
    sys.exit(child_main())
