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

"""What a scope's rows hold back, read when its pool is full or counted.

A pick that finds a CIDR never reads this: the driver imports it when a
scope's pool is exhausted, to say in the
:class:`~murano_cidr.exceptions.PoolExhausted` what is live, what is held
back and when it frees, and ``usage`` (:mod:`.records`) counts with it.
"""

import datetime

import sqlalchemy as sa

from murano_cidr._i18n import _
from murano_cidr.engine.drivers.db import compat
from murano_cidr.engine.drivers.db import models
from murano_cidr.engine.drivers.db import statements
from murano_cidr.engine import taken as taken_mod
from murano_cidr import messages

ALLOCATIONS = statements.ALLOCATIONS


def exhausted(driver, conn, pool, scope, taken_set):
    """Return the PoolExhausted of a scope, with what it holds back.

    :param driver: the :class:`~murano_cidr.engine.drivers.db.driver.DbDriver`.
    :param conn: the allocation's connection, in its transaction.
    :param pool: the :class:`~murano_cidr.engine.pool.Pool` that is full.
    :param scope: the scope, or None.
    :param taken_set: what the pick found taken.
    :returns: a :class:`~murano_cidr.exceptions.PoolExhausted`.
    """
    if scope is None:
        return driver.exhausted(pool, scope, pool.free_map(taken_set))
    held = held_in_pool(conn, pool, scope)
    back = hold_back(conn, scope, pool.version, *driver.ages)
    return driver.exhausted(
        pool, scope, pool.free_map(taken_set.union(held)),
        pool.free_map(held), held_back=_held_back(
            back, *driver.ages,
            configuration=messages.config_options(driver.conf)))


def _held_back(back, grace, timeout, configuration):
    """Say what ``back`` (:func:`hold_back`) holds back.

    :param configuration: the options that name the caller's
        configuration, for the command the message suggests.
    """
    text = _("; %d live") % back.live
    if back.released:
        text += _(", %(n)d released and held back (%(g)d within "
                  "release_grace = %(grace)d s, %(r)d past it whose "
                  "subnet the last allocation saw on the router)") % {
            "n": back.released, "g": back.in_grace, "grace": grace,
            "r": back.released - back.in_grace}
    if back.first_release is not None:
        text += _("; the first held back frees at %s UTC unless its "
                  "subnet is on the router") % _after(
                      back.first_release, grace)
    if back.unconfirmed:
        text += _("; of the live, %(n)d unconfirmed, each reclaimed once "
                  "reservation_timeout = %(timeout)d s has passed unless "
                  "its subnet is on the router, the first at %(at)s "
                  "UTC") % {"n": back.unconfirmed, "timeout": timeout,
                            "at": _after(back.first_reservation, timeout)}
    return text + _("; 'murano-cidr %sreconcile' releases what deleted "
                    "environments left behind") % configuration


def _after(moment, seconds):
    """``moment`` (naive UTC) plus ``seconds``, to the second, as text."""
    return (moment + datetime.timedelta(seconds=seconds)).strftime(
        "%Y-%m-%d %H:%M:%S")


def held_in_pool(conn, pool, scope):
    """What the scope's rows hold of ``pool``, as a :class:`~.TakenSet`."""
    return taken_mod.TakenSet(pool.version, [
        (int(r.range_first, 16), int(r.range_last, 16))
        for network in pool.networks
        for r in statements.read_window(conn, scope, pool.version,
                                        network.first, network.last)[0]])


def hold_back(conn, scope, ip_version, grace, timeout):
    """Say what a scope holds back, by the server's clock.

    :returns: a row: ``live`` rows, ``released`` rows held back,
        ``in_grace`` (of them, released less than ``grace`` seconds ago),
        ``first_release`` (the earliest release among those, naive UTC),
        ``unconfirmed`` live rows and ``first_reservation`` (the earliest
        made among those).
    """
    in_grace = ALLOCATIONS.c.released_at > models.utc_now(grace)
    unconfirmed = sa.and_(ALLOCATIONS.c.released_at.is_(None),
                          ALLOCATIONS.c.confirmed == sa.false())

    def count_if(condition):
        return sa.func.coalesce(sa.func.sum(compat.case((condition, 1),
                                                        else_=0)), 0)

    return conn.execute(compat.select(
        count_if(ALLOCATIONS.c.released_at.is_(None)).label("live"),
        count_if(statements.HELD).label("released"),
        count_if(in_grace).label("in_grace"),
        sa.func.min(compat.case((in_grace, ALLOCATIONS.c.released_at)))
        .label("first_release"),
        count_if(unconfirmed).label("unconfirmed"),
        sa.func.min(compat.case((unconfirmed, ALLOCATIONS.c.created_at)))
        .label("first_reservation")).where(sa.and_(
            statements.scope_is(scope),
            ALLOCATIONS.c.ip_version == ip_version))).first()
