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

"""What the concurrency tests run in their worker processes.

Each worker builds its own configuration and driver (nothing crosses the
process boundary but plain values), waits at the barrier so that all start
together, and reports what every call returned or raised.
"""

import random

from oslo_config import cfg

from murano_cidr import allocator
from murano_cidr import exceptions
from murano_cidr import opts


def build_driver(url, settings):
    """Build a db driver from a URL and ``[cidr_allocator]`` settings."""
    conf = cfg.ConfigOpts()
    conf([], project="murano-cidr-test", default_config_files=[],
         default_config_dirs=[])
    opts.register_opts(conf)
    for name, value in settings.items():
        conf.set_override(name, value, group=opts.GROUP)
    conf.set_override("connection", url, group=opts.DATABASE_GROUP)
    conf.set_override("sqlite_synchronous", False, group=opts.DATABASE_GROUP)
    return allocator.get_allocator(conf)


def allocate_many(url, settings, scope, owners, seed, barrier, results):
    """Allocate ``owners`` (shuffled by ``seed``) in ``scope``.

    Puts on ``results`` a list of ``(owner, cidr, error)``: ``error`` is
    the name of a murano-cidr exception, or ``"UNHANDLED ..."`` for
    anything else.
    """
    owners = list(owners)
    random.Random(seed).shuffle(owners)
    outcome = []
    try:
        driver = build_driver(url, settings)
        barrier.wait()
        for owner in owners:
            try:
                outcome.append((owner, driver.allocate(owner, scope=scope),
                                None))
            except exceptions.MuranoCidrException as e:
                outcome.append((owner, None, type(e).__name__))
            except Exception as e:
                outcome.append((owner, None, "UNHANDLED %s: %s"
                                % (type(e).__name__, e)))
        driver.close()
    except Exception as e:
        outcome.append((None, None, "UNHANDLED %s: %s"
                        % (type(e).__name__, e)))
    results.put(outcome)
