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

"""A stand-in for Murano's MuranoPL engine, to run ``NeutronNetwork``.

Enough of Murano's DSL to run the ``deploy`` and ``.destroy`` methods of a
``NeutronNetwork`` class file (the test's own, changed or not by
``patch-core-library``), restated from reading Murano's ``murano/dsl``
(Xena to 2023.2; Ussuri's and Victoria's differ from it only in how a
Python class's classmethods are wrapped, and ``NetworkExplorer`` has
none):

* expressions are yaql, Murano's expression language, evaluated by the
  real yaql library; ``$`` is the object, ``$name`` a local variable;
* steps are an expression, an assignment (``$.property: expr`` or
  ``$variable: expr``) or an ``If``/``Then``/``Else``;
* ``obj.method(args)`` calls a method the object's class has, and fails
  with :class:`NoMethodFound` ("Unknown method") otherwise, as Murano does;
* a Python class (such as ``NetworkExplorer``) has, as a MuranoPL class,
  the public methods its Python class had when it was registered, under
  their camelCase names (``confirm_cidr`` is ``confirmCidr``);
  ``typeinfo(obj).methods`` lists them, each with its ``name``;
* an object's attributes (``getAttr``/``setAttr``) are kept from its
  deployment to its ``.destroy``, as Murano keeps them in the object model.
"""

import yaml

import yaql
from yaql.language import conventions
from yaql.language import expressions
from yaql.language import specs
from yaql.language import utils
from yaql.language import yaqltypes

_CONVENTION = conventions.CamelCaseConvention()


class NoMethodFound(Exception):
    """What Murano's DSL raises for a method the receiver does not have."""


class MuranoObject(object):
    """An object of the DSL: a type name, methods and properties.

    :param type_name: the MuranoPL class name.
    :param methods: MuranoPL name to a Python callable.
    """

    def __init__(self, type_name, methods, properties=None):
        self.type_name = type_name
        self.methods = dict(methods)
        self.properties = dict(properties or {})

    def call(self, name, args):
        if name not in self.methods:
            raise NoMethodFound('Unknown method "%s" for receiver <%s>'
                                % (name, self.type_name))
        return self.methods[name](*args)

    def typeinfo(self):
        return {"name": self.type_name, "methods": [
            {"name": name} for name in sorted(self.methods)
            if not name.startswith((".", "__"))]}


def native(type_name, instance):
    """Wrap a Python object as Murano registers its class in the DSL."""
    cls = type(instance)
    methods = {_CONVENTION.convert_function_name(name):
               getattr(instance, name) for name in dir(cls)
               if not name.startswith("_") and callable(getattr(cls, name))}
    return MuranoObject(type_name, methods)


@specs.parameter("receiver", yaqltypes.PythonType(MuranoObject))
@specs.parameter("expr", yaqltypes.YaqlExpression(expressions.Function))
@specs.name("#operator_.")
def _call(receiver, expr, context, engine):
    args = tuple(arg(utils.NO_VALUE, context, engine) for arg in expr.args)
    return receiver.call(expr.name, args)


@specs.parameter("receiver", yaqltypes.PythonType(MuranoObject))
@specs.parameter("name", yaqltypes.Keyword())
@specs.name("#operator_.")
def _property(receiver, name):
    return receiver.properties.get(name)


@specs.parameter("obj", yaqltypes.PythonType(MuranoObject))
@specs.name("id")
def _id(obj):
    return obj.properties["id"]


@specs.parameter("obj", yaqltypes.PythonType(MuranoObject))
def typeinfo(obj):
    return obj.typeinfo()


class Network(object):
    """A ``NeutronNetwork`` object, its class given by its file's text.

    :param text: the class file.
    :param object_id: the object's id (``id($)``).
    :param explorer: returns the ``NetworkExplorer`` (a :func:`native`
        object), once per object, as the core library's
        ``_getNetExplorer`` caches it.
    :param push: called for the stack push, with the object's properties.
    :param attributes: the object model's attributes of the object.
    """

    _engine = yaql.factory.YaqlFactory().create()

    def __init__(self, text, object_id, explorer, push, attributes,
                 router_id=None):
        self.body = {name: method.get("Body") or [] for name, method in
                     yaml.safe_load(text)["Methods"].items()}
        self.attributes = attributes
        self._explorer = None
        self._make_explorer = explorer
        region = MuranoObject("io.murano.CloudRegion", {})
        region.properties["stack"] = MuranoObject(
            "io.murano.system.HeatStack",
            {"push": lambda: push(dict(self.this.properties))})
        self.this = MuranoObject("io.murano.resources.NeutronNetwork", {
            "getAttr": lambda key, default=None: attributes.get(
                key, default),
            "setAttr": attributes.__setitem__,
            "getRegion": lambda: region,
            "_getNetExplorer": self._get_explorer,
        }, {"id": object_id, "subnetCidr": None, "routerId": router_id})
        self.context = yaql.create_context().create_child_context()
        for function in (_call, _property, _id, typeinfo):
            self.context.register_function(function)

    def _get_explorer(self):
        if self._explorer is None:
            self._explorer = self._make_explorer()
        return self._explorer

    def run(self, method):
        """Run the MuranoPL method, if the class has it.

        :raises NoMethodFound: for a call to a method its receiver lacks.
        """
        self._steps(self.body.get(method, []), {})

    def _eval(self, expression, variables):
        if not isinstance(expression, str):
            return expression
        context = self.context.create_child_context()
        context["$"] = self.this
        for name, value in variables.items():
            context[name] = value
        return self._engine(expression).evaluate(context=context)

    def _steps(self, steps, variables):
        for step in steps:
            if not isinstance(step, dict):
                self._eval(step, variables)
            elif "If" in step:
                branch = "Then" if self._eval(step["If"], variables) else (
                    "Else")
                self._steps(step.get(branch) or [], variables)
            else:
                (target, expression), = step.items()
                value = self._eval(expression, variables)
                if target.startswith("$."):
                    self.this.properties[target[2:]] = value
                else:
                    variables[target[1:]] = value
