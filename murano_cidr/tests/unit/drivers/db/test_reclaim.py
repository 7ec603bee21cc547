#    Licensed under the Apache License, Version 2.0 (the "License"); you may
#    not use this file except in compliance with the License. You may obtain
#    a copy of the License at
#
#         http://www.apache.org/licenses/LICENSE-2.0
#
#    Unless required by applicable law or agreed to in writing, software
#    distributed under the License is distributed on an "AS IS" BASIS, WITHOUT
#    WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied. See the
#    License for the specific language governing permissions and limitations
#    under the License.

"""Dead engines' reservations on SQLite (other backends: functional)."""

import os

from oslo_config import cfg

from murano_cidr import messages
from murano_cidr.tests import base as test_base
from murano_cidr.tests import reclaim
from murano_cidr.tests.unit.drivers.db import base


class TestReclaim(reclaim.ReclaimTests, base.DbTestCase):
    pass


class TestSuggestedCommand(test_base.TestCase):
    """A full pool suggests reconcile with the caller's own configuration."""

    def test_the_files_and_directories_the_engine_read(self):
        path = os.path.join(self.state_path, "murano.conf")
        directory = os.path.join(self.state_path, "murano.conf.d")
        os.makedirs(directory)
        with open(path, "w") as f:
            f.write("[DEFAULT]\n")
        conf = cfg.ConfigOpts()
        conf(["--config-file", path, "--config-dir", directory])
        self.assertEqual("--config-file %s --config-dir %s "
                         % (path, directory), messages.config_options(conf))

    def test_no_file_leaves_the_command_its_search(self):
        conf = cfg.ConfigOpts()
        self.assertEqual("", messages.config_options(conf))
        conf([], default_config_files=[], default_config_dirs=[])
        self.assertEqual("", messages.config_options(conf))
