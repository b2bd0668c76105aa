#!/usr/bin/env python3
"""Build per-release CLI option tables for vLLM and SGLang from their wheels, without importing them.

The engines' argument definitions are read with `ast` and run through a small abstract
interpreter (below): module bodies, `add_cli_args` functions and the helpers they call are
executed over concrete values where the source makes them concrete (string literals, lists,
Literal[...] aliases, enums, dataclass fields) and over an "unknown" value everywhere else
(torch, platform probes, environment variables, plugins).  Branches whose condition is unknown
are both taken, so an option registered only on some platform is still listed.  The dataclass
driven helpers (vLLM `get_kwargs`, SGLang `add_cli_args_from_dataclass`) are re-implemented
here from their source, because they work by runtime type introspection.

Usage (see rules/data/options/README.md):
  extract_options.py fetch   ENGINE WORKDIR VERSION...      # pip download + unpack the .py files
  extract_options.py extract ENGINE DIR_OR_WHEEL [--json]    # one release, print a summary / JSON
  extract_options.py build   ENGINE WORKDIR OUT.yaml [--versions V...] [--fetch]

Stdlib only (Python 3.11).  Exits non-zero, naming what was not found, when a release cannot be
read completely (no add_cli_args, no speculative config class, no enum, an argument whose name
cannot be resolved, ...).
"""
from __future__ import annotations

import argparse
import ast
import hashlib
import itertools
import json
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

sys.setrecursionlimit(20000)


class ExtractError(Exception):
    """A fact the table needs was not found in a release: fail loudly."""


# ============================================================================================
# Values of the abstract interpreter
# ============================================================================================

class Unknown:
    __slots__ = ("why",)

    def __init__(self, why=""):
        self.why = why

    def __repr__(self):
        return f"<?{self.why}>"


def is_unk(v):
    return isinstance(v, Unknown)


class ExtRef:
    """A name from outside the package (torch.dtype, argparse.BooleanOptionalAction, ...)."""
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"<ext {self.name}>"

    def __eq__(self, other):
        return isinstance(other, ExtRef) and other.name == self.name

    def __hash__(self):
        return hash(("ext", self.name))


class BType:
    """A builtin type used as a value (int, str, dict, ...)."""
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return self.name

    def __eq__(self, other):
        return isinstance(other, BType) and other.name == self.name

    def __hash__(self):
        return hash(("bt", self.name))


BUILTIN_TYPES = {n: BType(n) for n in ("int", "str", "float", "bool", "dict", "list", "tuple", "set",
                                       "frozenset", "bytes", "object", "type", "complex")}
NONE_T = BType("NoneType")


class TForm:
    """An unsubscripted typing construct (Literal, Optional, Union, Annotated, List, Any ...)."""
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"typing.{self.name}"

    def __eq__(self, other):
        return isinstance(other, TForm) and other.name == self.name

    def __hash__(self):
        return hash(("tf", self.name))


class TLit:
    __slots__ = ("values", "origin")

    def __init__(self, values, origin=None):
        self.values = tuple(values)
        self.origin = origin

    def __repr__(self):
        return f"Literal{list(self.values)}"


class TUnion:
    __slots__ = ("items",)

    def __init__(self, items):
        flat = []
        for it in items:
            if isinstance(it, TUnion):
                flat.extend(it.items)
            else:
                flat.append(it)
        self.items = tuple(flat)

    def __repr__(self):
        return " | ".join(map(repr, self.items))


class TAnn:
    __slots__ = ("inner", "meta")

    def __init__(self, inner, meta):
        self.inner = inner
        self.meta = tuple(meta)

    def __repr__(self):
        return f"Annotated[{self.inner!r}, ...]"


class TGen:
    """A subscripted generic: list[int], dict[str, Any], tuple[int, ...], ClassVar[x] ..."""
    __slots__ = ("origin", "args")

    def __init__(self, origin, args):
        self.origin = origin
        self.args = tuple(args)

    def __repr__(self):
        return f"{self.origin}{list(self.args)}"


TYPING_GENERIC_ORIGIN = {"List": "list", "Dict": "dict", "Tuple": "tuple", "Set": "set", "FrozenSet": "frozenset",
                         "Type": "type", "Sequence": "Sequence", "Mapping": "Mapping", "Iterable": "Iterable",
                         "Callable": "Callable", "ClassVar": "ClassVar", "InitVar": "InitVar", "Final": "Final",
                         "MutableMapping": "Mapping", "MutableSequence": "Sequence", "DefaultDict": "dict",
                         "OrderedDict": "dict", "Awaitable": "Awaitable", "Iterator": "Iterator",
                         "Generator": "Generator", "AbstractSet": "set", "Collection": "Sequence",
                         "Hashable": "Hashable"}
TYPE_WRAPPERS = {"SkipValidation", "Required", "NotRequired", "ReadOnly", "InstanceOf"}


class ModuleObj:
    def __init__(self, interp, name, path):
        self.interp = interp
        self.name = name
        self.path = path
        self.env = {"__name__": name}
        self.state = "new"      # new | running | done
        self.tree = None

    def ensure(self):
        if self.state == "new":
            self.interp.exec_module(self)
        return self

    def __repr__(self):
        return f"<module {self.name}>"


class LazyImport:
    __slots__ = ("modname", "attr")

    def __init__(self, modname, attr):
        self.modname = modname
        self.attr = attr


class FieldSpec:
    """Result of dataclasses.field(...) / pydantic.Field(...) / msgspec.field(...)."""

    def __init__(self, default, factory, kwargs, kind="dataclass"):
        self.default = default
        self.factory = factory
        self.kwargs = kwargs
        self.kind = kind


class FieldInfo:
    """One dataclass / config field: name, evaluated type, default (or MISSING), default factory
    (or MISSING), attribute docstring.  Also what dataclasses.fields() hands to interpreted code."""

    def __init__(self, name, type_, default, doc, origin, owner, factory=None, missing=None):
        self.name = name
        self.type = type_
        self.default = default
        self.factory = MISSING if factory is None else factory
        self.doc = doc
        self.origin = origin
        self.owner = owner
        self.missing = missing      # sentinel used for "no default" (dataclasses.MISSING / msgspec.NODEFAULT)

    def value(self, interp):
        """Best-effort default value (factories of builtin containers are applied)."""
        if self.default is not MISSING:
            if isinstance(self.default, FieldSpec):
                return _fieldspec_default(interp, self.default)
            return self.default
        if self.factory is not MISSING:
            return _fieldspec_default(interp, FieldSpec(MISSING, self.factory, {}))
        return Unknown("no default")

    def __repr__(self):
        return f"<field {self.name}: {self.type!r}>"


class ClassObj:
    def __init__(self, interp, name, module, node, outer_env=None, synth_ns=None, synth_fields=None):
        self.interp = interp
        self.name = name
        self.module = module
        self.node = node
        self.outer_env = outer_env
        self._ns = synth_ns
        self._bases = None if node is not None else []
        self._fields = synth_fields
        self.ann_nodes = []     # (name, annotation node, value node or None, doc or None, lineno)
        self.ann_override = None
        self.decorators = []
        if node is not None:
            self.decorators = [_dotted(d.func if isinstance(d, ast.Call) else d) for d in node.decorator_list]

    def __repr__(self):
        return f"<class {self.name}>"

    @property
    def origin(self):
        return self.module.path if self.module else None

    # -- namespace ---------------------------------------------------------------------------
    def ns(self):
        if self._ns is None:
            self._ns = {}
            self.interp.exec_class_body(self)
        return self._ns

    def bases(self):
        if self._bases is None:
            self._bases = []
            fr = Frame(self.module, self.outer_env)
            for b in self.node.bases:
                self._bases.append(self.interp.eval(b, fr))
            for kw in self.node.keywords:
                if kw.arg == "metaclass":
                    self._bases.append(("metaclass", self.interp.eval(kw.value, fr)))
        return self._bases

    def mro(self):
        out, seen = [], set()

        def walk(c):
            if id(c) in seen:
                return
            seen.add(id(c))
            out.append(c)
            for b in c.bases():
                if isinstance(b, ClassObj):
                    walk(b)
        walk(self)
        return out

    def lookup(self, name, start_after=None):
        mro = self.mro()
        if start_after is not None:
            mro = mro[[id(c) for c in mro].index(id(start_after)) + 1:] if start_after in mro else mro
        for c in mro:
            ns = c.ns()
            if name in ns:
                return ns[name], c
        return None, None

    def ext_bases(self):
        names = []
        for c in self.mro():
            for b in c.bases():
                if isinstance(b, ExtRef):
                    names.append(b.name)
                elif isinstance(b, tuple) and isinstance(b[1], ExtRef):
                    names.append(b[1].name)
                elif isinstance(b, BType):
                    names.append(b.name)
        return names

    def is_enum(self):
        return any(n.split(".")[-1] in ("Enum", "IntEnum", "StrEnum", "Flag", "IntFlag", "EnumMeta", "EnumType")
                   for n in self.ext_bases())

    def is_dict_subclass(self):
        return any(n.split(".")[-1] in ("dict", "Dict", "OrderedDict", "defaultdict") for n in self.ext_bases()) \
            and not self.is_typeddict()

    def is_typeddict(self):
        return any(n.split(".")[-1] == "TypedDict" for n in self.ext_bases())

    def is_dataclass(self):
        if self._fields is not None:
            return True
        for c in self.mro():
            if any(d and d.split(".")[-1] in ("dataclass", "config", "dataclass_transform") for d in c.decorators):
                return True
            if any(n.split(".")[-1] in ("Struct", "BaseModel") for n in c.ext_bases()):
                return True
        return False

    def enum_members(self):
        ns = self.ns()
        out = []
        for k, v in ns.items():
            if isinstance(v, EnumMember):
                out.append(v)
        return out

    # -- dataclass fields --------------------------------------------------------------------
    def fields(self):
        if self._fields is not None:
            return self._fields
        self.ns()
        for c in self.mro():
            if c.origin:
                self.interp.fields_origins.add(c.origin)
        out = {}
        for c in reversed(self.mro()):
            c.ns()
            if c.ann_override is not None:
                for name, t in c.ann_override.items():
                    out[name] = FieldInfo(name, t, Unknown("default"), None, c.origin, c)
                continue
            if c.is_enum():
                continue
            for (name, ann, value_node, doc, lineno) in c.ann_nodes:
                t = self.interp.eval_annotation(ann, Frame(c.module, c.outer_env))
                if _is_classvar(t):
                    continue
                default, factory = MISSING, MISSING
                if value_node is not None:
                    default = c.ns().get(name, Unknown("default"))
                    if isinstance(default, FieldSpec) and default.kind != "pydantic":
                        default, factory = default.default, default.factory
                out[name] = FieldInfo(name, t, default, doc, c.origin, c, factory=factory)
        self._fields = list(out.values())
        return self._fields


def _is_classvar(t):
    if isinstance(t, TAnn):
        t = t.inner
    return (isinstance(t, TGen) and t.origin in ("ClassVar", "InitVar")) or \
        (isinstance(t, TForm) and t.name in ("ClassVar", "InitVar"))


def _fieldspec_default(interp, fs):
    if not is_unk(fs.default) and fs.default is not MISSING:
        return fs.default
    f = fs.factory
    if isinstance(f, BType) and f.name in ("list", "dict", "set", "tuple"):
        return {"list": [], "dict": {}, "set": set(), "tuple": ()}[f.name]
    if isinstance(f, (FuncObj, Bound)):
        try:
            return interp.call(f, [], {}, None)
        except Exception:
            return Unknown("factory")
    return Unknown("factory")


class _Missing:
    def __repr__(self):
        return "MISSING"


MISSING = _Missing()


class FuncObj:
    def __init__(self, name, module, node, owner=None, kind="func", closure=None):
        self.name = name
        self.module = module
        self.node = node
        self.owner = owner
        self.kind = kind            # func | static | class | property
        self.closure = closure      # enclosing Frame for nested functions / lambdas
        self.defaults = None        # (positional defaults, kw-only defaults) once evaluated

    @property
    def qualname(self):
        base = f"{self.owner.name}.{self.name}" if self.owner else self.name
        return f"{self.module.name}.{base}" if self.module else base

    def __repr__(self):
        return f"<func {self.qualname}>"


class Bound:
    __slots__ = ("func", "obj")

    def __init__(self, func, obj):
        self.func = func
        self.obj = obj

    def __repr__(self):
        return f"<bound {self.func!r}>"


class Instance:
    def __init__(self, cls, attrs=None):
        self.cls = cls
        self.attrs = attrs or {}

    def __repr__(self):
        return f"<{self.cls.name}()>"


class EnumMember:
    __slots__ = ("cls", "name", "value")

    def __init__(self, cls, name, value):
        self.cls = cls
        self.name = name
        self.value = value

    def __repr__(self):
        return f"{self.cls.name}.{self.name}"


class Intrinsic:
    __slots__ = ("name", "fn")

    def __init__(self, name, fn):
        self.name = name
        self.fn = fn

    def __repr__(self):
        return f"<intrinsic {self.name}>"


class PyMethod:
    __slots__ = ("obj", "name")

    def __init__(self, obj, name):
        self.obj = obj
        self.name = name


class SuperProxy:
    def __init__(self, cls, obj):
        self.cls = cls
        self.obj = obj


class ArgRecord:
    def __init__(self, names, kw, file, line, group):
        self.names = names
        self.kw = kw
        self.file = file
        self.line = line
        self.group = group

    def __repr__(self):
        return f"<arg {self.names}>"


class Parser:
    """A stand-in argparse parser: records add_argument calls (groups share the records)."""

    def __init__(self, interp, records=None, group=None):
        self.interp = interp
        self.records = records if records is not None else []
        self.group = group
        self.attrs = {}

    def __repr__(self):
        return f"<parser {self.group}>"


class SubParsers:
    def __init__(self, interp):
        self.interp = interp
        self.parsers = {}


class Signal(Exception):
    pass


class ReturnSig(Signal):
    def __init__(self, value):
        self.value = value


class RaiseSig(Signal):
    pass


class BreakSig(Signal):
    pass


class ContinueSig(Signal):
    pass


class Budget(Exception):
    pass


def _dotted(node):
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        b = _dotted(node.value)
        return f"{b}.{node.attr}" if b else None
    return None


class Frame:
    __slots__ = ("module", "locals", "parent", "cls", "func", "uncertain")

    def __init__(self, module, parent=None, locals_=None, cls=None, func=None):
        self.module = module
        self.parent = parent            # enclosing function frame (closures) or None
        self.locals = locals_ if locals_ is not None else (module.env if parent is None and module else {})
        self.cls = cls
        self.func = func
        self.uncertain = False


PRIMS = (type(None), bool, int, float, str, bytes)
DICT_VIEWS = (type({}.keys()), type({}.values()), type({}.items()))


def concrete(v):
    if isinstance(v, PRIMS):
        return True
    if isinstance(v, (list, tuple, set, frozenset)):
        return all(concrete(x) for x in v)
    if isinstance(v, dict):
        return all(concrete(k) and concrete(x) for k, x in v.items())
    return False


SAFE_METHODS = {
    str: {"replace", "lower", "upper", "strip", "lstrip", "rstrip", "split", "join", "format", "startswith",
          "endswith", "title", "capitalize", "removeprefix", "removesuffix", "splitlines", "rsplit", "isdigit",
          "casefold", "partition", "count", "find"},
    list: {"append", "extend", "remove", "insert", "pop", "index", "copy", "sort", "reverse", "count", "clear"},
    tuple: {"index", "count"},
    dict: {"items", "keys", "values", "get", "pop", "update", "copy", "setdefault", "clear"},
    set: {"add", "update", "discard", "remove", "union", "copy", "difference", "intersection", "pop", "clear"},
    frozenset: {"union", "difference", "intersection"},
}

BIN_OPS = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
           ast.Div: lambda a, b: a / b, ast.FloorDiv: lambda a, b: a // b, ast.Mod: lambda a, b: a % b,
           ast.Pow: lambda a, b: a ** b, ast.BitOr: lambda a, b: a | b, ast.BitAnd: lambda a, b: a & b,
           ast.LShift: lambda a, b: a << b, ast.RShift: lambda a, b: a >> b, ast.BitXor: lambda a, b: a ^ b}
CMP_OPS = {ast.Eq: lambda a, b: a == b, ast.NotEq: lambda a, b: a != b, ast.Lt: lambda a, b: a < b,
           ast.LtE: lambda a, b: a <= b, ast.Gt: lambda a, b: a > b, ast.GtE: lambda a, b: a >= b,
           ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b}


def _is_typeish(v):
    return isinstance(v, (BType, TForm, TLit, TUnion, TAnn, TGen, ClassObj, ExtRef)) or v is None


# ============================================================================================
# The interpreter
# ============================================================================================

class Interp:
    MAX_DEPTH = 40
    MAX_RECURSION = 8           # nested activations of one function (type-hint walkers recurse)
    MAX_STEPS = 3_000_000

    def __init__(self, root, pkg):
        self.root = Path(root)
        self.pkg = pkg
        self.modules = {}
        self.steps = 0
        self.depth = 0
        self.active = {}
        self.hooks = {}             # qualified function name -> python callable(interp, args, kwargs, node, frame)
        self.parser_leaks = []      # (callee description, file:line): parser handed to code we cannot see
        self.unresolved = []        # add_argument calls whose names could not be resolved
        self.files_used = set()
        self.subparsers_created = []
        self.fields_origins = set()
        self.cur_file = None
        self.cur_line = None
        self.call_site = (None, None)

    # -- modules -----------------------------------------------------------------------------
    def module_path(self, name):
        parts = name.split(".")
        p = self.root.joinpath(*parts)
        if (p / "__init__.py").is_file():
            return p / "__init__.py"
        f = p.with_suffix(".py")
        if f.is_file():
            return f
        if p.is_dir():                          # namespace package
            return p
        return None

    def get_module(self, name):
        if name in self.modules:
            return self.modules[name]
        if name.split(".")[0] != self.pkg:
            return None
        path = self.module_path(name)
        if path is None:
            return None
        m = ModuleObj(self, name, path)
        self.modules[name] = m
        return m

    def relpath(self, path):
        try:
            return str(Path(path).relative_to(self.root))
        except ValueError:
            return str(path)

    def exec_module(self, m):
        m.state = "running"
        if m.path.is_dir():
            m.state = "done"
            return
        src = m.path.read_text(encoding="utf-8")
        try:
            m.tree = ast.parse(src, str(m.path))
        except SyntaxError as e:
            raise ExtractError(f"cannot parse {self.relpath(m.path)}: {e}")
        fr = Frame(m)
        try:
            self.exec_block(m.tree.body, fr)
        except Signal:
            pass
        m.state = "done"

    def resolve_lazy(self, v):
        while isinstance(v, LazyImport):
            v = self.import_value(v.modname, v.attr)
        return v

    def import_value(self, modname, attr):
        if modname.split(".")[0] != self.pkg:
            return ext_lookup(f"{modname}.{attr}" if attr else modname)
        if attr is None:
            m = self.get_module(modname)
            return m if m is not None else Unknown(f"module {modname}")
        m = self.get_module(modname)
        if m is not None:
            m.ensure()
            if attr in m.env:
                v = self.resolve_lazy(m.env[attr])
                m.env[attr] = v
                return v
        sub = self.get_module(f"{modname}.{attr}")
        if sub is not None:
            return sub
        if m is not None:
            ga = m.env.get("__getattr__")
            lazy = self.module_lazy_attr(m, attr)
            if lazy is not None:
                return lazy
            if ga is not None:
                return Unknown(f"{modname}.__getattr__({attr})")
        return Unknown(f"{modname}.{attr}")

    def module_lazy_attr(self, m, attr):
        """Modules that re-export lazily through a {name: module} table and __getattr__."""
        for k, v in list(m.env.items()):
            if k.startswith("_") and isinstance(v, dict) and attr in v and isinstance(v[attr], str):
                target = v[attr]
                if isinstance(target, str) and target.startswith(self.pkg):
                    return self.import_value(target, attr)
                if isinstance(target, str) and target.startswith("."):
                    base = m.name if m.path.name == "__init__.py" else m.name.rpartition(".")[0]
                    return self.import_value(base + target, attr)
        return None

    # -- statements --------------------------------------------------------------------------
    def tick(self):
        self.steps += 1
        if self.steps > self.MAX_STEPS:
            raise Budget("interpreter step budget exhausted")

    def exec_block(self, stmts, fr):
        for s in stmts:
            self.exec_stmt(s, fr)

    def exec_uncertain(self, stmts, fr):
        old = fr.uncertain
        fr.uncertain = True
        try:
            self.exec_block(stmts, fr)
        except (ReturnSig, RaiseSig, BreakSig, ContinueSig):
            pass
        finally:
            fr.uncertain = old

    def exec_stmt(self, s, fr):
        self.tick()
        if fr.module is not None:
            self.cur_file, self.cur_line = fr.module.path, getattr(s, "lineno", None)
        t = type(s)
        if t is ast.Expr:
            self.eval(s.value, fr)
        elif t is ast.Assign:
            v = self.eval(s.value, fr)
            for tgt in s.targets:
                self.assign(tgt, v, fr)
        elif t is ast.AnnAssign:
            if s.value is not None:
                self.assign(s.target, self.eval(s.value, fr), fr)
        elif t is ast.AugAssign:
            cur = self.eval(s.target, fr)
            val = self.eval(s.value, fr)
            if isinstance(cur, list) and isinstance(s.op, ast.Add) and isinstance(val, (list, tuple)):
                cur.extend(val)
                new = cur
            elif isinstance(cur, set) and isinstance(s.op, ast.BitOr) and isinstance(val, (set, frozenset)):
                cur.update(val)
                new = cur
            elif isinstance(cur, dict) and isinstance(s.op, ast.BitOr) and isinstance(val, dict):
                cur.update(val)
                new = cur
            else:
                new = self.binop(cur, s.op, val)
            self.assign(s.target, new, fr)
        elif t is ast.If:
            c = self.truth(self.eval(s.test, fr))
            if c is True:
                self.exec_block(s.body, fr)
            elif c is False:
                self.exec_block(s.orelse, fr)
            else:
                self.exec_uncertain(s.body, fr)
                self.exec_uncertain(s.orelse, fr)
        elif t in (ast.For, ast.AsyncFor):
            it = self.iterate(self.eval(s.iter, fr))
            if it is None:
                old = fr.uncertain
                fr.uncertain = True
                self.assign(s.target, Unknown("loop var"), fr)
                try:
                    self.exec_block(s.body, fr)
                except (ReturnSig, RaiseSig, BreakSig, ContinueSig):
                    pass
                finally:
                    fr.uncertain = old
            else:
                broke = False
                for item in it:
                    self.assign(s.target, item, fr)
                    try:
                        self.exec_block(s.body, fr)
                    except BreakSig:
                        broke = True
                        break
                    except ContinueSig:
                        continue
                if not broke:
                    self.exec_block(s.orelse, fr)
        elif t is ast.While:
            pass
        elif t in (ast.Try, getattr(ast, "TryStar", ast.Try)):
            try:
                self.exec_block(s.body, fr)
                self.exec_block(s.orelse, fr)
            except RaiseSig:
                for h in s.handlers:
                    self.exec_uncertain(h.body, fr)
            finally:
                self.exec_block(s.finalbody, fr)
        elif t in (ast.With, ast.AsyncWith):
            for item in s.items:
                self.eval(item.context_expr, fr)
                if item.optional_vars is not None:
                    self.assign(item.optional_vars, Unknown("with"), fr)
            self.exec_block(s.body, fr)
        elif t in (ast.FunctionDef, ast.AsyncFunctionDef):
            kind = "func"
            for d in s.decorator_list:
                dn = _dotted(d.func if isinstance(d, ast.Call) else d) or ""
                last = dn.split(".")[-1]
                if last == "staticmethod":
                    kind = "static"
                elif last == "classmethod":
                    kind = "class"
                elif last in ("property", "cached_property"):
                    kind = "property"
            closure = fr if fr.parent is not None or (fr.func is not None) else None
            fn = FuncObj(s.name, fr.module, s, owner=fr.cls, kind=kind, closure=closure)
            if fr.func is not None:         # nested def: defaults bind now (cls=dataclass_cls idiom)
                fn.defaults = self.eval_defaults(s.args, fr)
            fr.locals[s.name] = fn
        elif t is ast.ClassDef:
            outer = fr if fr.func is not None else None
            fr.locals[s.name] = ClassObj(self, s.name, fr.module, s, outer_env=outer)
        elif t is ast.Return:
            raise ReturnSig(self.eval(s.value, fr) if s.value is not None else None)
        elif t is ast.Import:
            for a in s.names:
                if a.asname:
                    fr.locals[a.asname] = LazyImport(a.name, None) if a.name.split(".")[0] == self.pkg \
                        else ext_lookup(a.name)
                else:
                    top = a.name.split(".")[0]
                    fr.locals[top] = LazyImport(top, None) if top == self.pkg else ext_lookup(top)
        elif t is ast.ImportFrom:
            modname = self.abs_module(s.module, s.level, fr.module)
            for a in s.names:
                if a.name == "*":
                    if modname.split(".")[0] == self.pkg:
                        m = self.get_module(modname)
                        if m is not None:
                            m.ensure()
                            for k, v in m.env.items():
                                if not k.startswith("_"):
                                    fr.locals[k] = v
                    continue
                fr.locals[a.asname or a.name] = LazyImport(modname, a.name)
        elif t is ast.Raise:
            if s.exc is not None:
                self.eval(s.exc, fr)
            raise RaiseSig()
        elif t is ast.Delete:
            for tgt in s.targets:
                if isinstance(tgt, ast.Subscript):
                    c = self.eval(tgt.value, fr)
                    k = self.eval(tgt.slice, fr)
                    if isinstance(c, (dict, list)) and concrete(k):
                        try:
                            del c[k]
                        except (KeyError, IndexError, TypeError):
                            pass
                elif isinstance(tgt, ast.Name):
                    fr.locals.pop(tgt.id, None)
        elif t is ast.Break:
            raise BreakSig()
        elif t is ast.Continue:
            raise ContinueSig()
        # Pass, Global, Nonlocal, Assert, Match, TypeAlias (3.12): nothing to do

    def abs_module(self, module, level, cur):
        if not level:
            return module
        base = cur.name if cur.path.name == "__init__.py" or cur.path.is_dir() else cur.name.rpartition(".")[0]
        for _ in range(level - 1):
            base = base.rpartition(".")[0]
        return f"{base}.{module}" if module else base

    def assign(self, tgt, v, fr):
        if isinstance(tgt, ast.Name):
            fr.locals[tgt.id] = v
        elif isinstance(tgt, (ast.Tuple, ast.List)):
            items = self.iterate(v)
            items = list(items) if items is not None else None
            stars = [i for i, e in enumerate(tgt.elts) if isinstance(e, ast.Starred)]
            if items is not None and not stars and len(items) == len(tgt.elts):
                for e, x in zip(tgt.elts, items):
                    self.assign(e, x, fr)
            elif items is not None and stars and len(items) >= len(tgt.elts) - 1:
                si = stars[0]
                nafter = len(tgt.elts) - si - 1
                for e, x in zip(tgt.elts[:si], items[:si]):
                    self.assign(e, x, fr)
                self.assign(tgt.elts[si].value, items[si:len(items) - nafter], fr)
                for e, x in zip(tgt.elts[si + 1:], items[len(items) - nafter:]):
                    self.assign(e, x, fr)
            else:
                for e in tgt.elts:
                    self.assign(e.value if isinstance(e, ast.Starred) else e, Unknown("unpack"), fr)
        elif isinstance(tgt, ast.Subscript):
            c = self.eval(tgt.value, fr)
            k = self.eval(tgt.slice, fr)
            if isinstance(c, (dict, list)) and (concrete(k) or isinstance(k, EnumMember)):
                try:
                    c[k] = v
                except (IndexError, TypeError):
                    pass
        elif isinstance(tgt, ast.Attribute):
            obj = self.eval(tgt.value, fr)
            if isinstance(obj, ClassObj):
                if tgt.attr == "__annotations__" and isinstance(v, dict):
                    obj.ns()
                    obj.ann_override = v
                    obj._fields = None
                else:
                    obj.ns()[tgt.attr] = v
            elif isinstance(obj, (Instance, Parser)):
                obj.attrs[tgt.attr] = v
            elif isinstance(obj, ModuleObj):
                obj.ensure().env[tgt.attr] = v
        elif isinstance(tgt, ast.Starred):
            self.assign(tgt.value, v, fr)

    # -- classes -----------------------------------------------------------------------------
    def exec_class_body(self, cls):
        ns = cls._ns
        fr = Frame(cls.module, cls.outer_env, locals_=ns, cls=cls)
        # class bodies see module globals: lookup falls through locals -> parent -> module env
        is_enum = cls.is_enum()
        body = cls.node.body
        for i, s in enumerate(body):
            if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name):
                doc = None
                if i + 1 < len(body) and isinstance(body[i + 1], ast.Expr) and \
                        isinstance(body[i + 1].value, ast.Constant) and isinstance(body[i + 1].value.value, str):
                    doc = body[i + 1].value.value
                cls.ann_nodes.append((s.target.id, s.annotation, s.value, doc, s.lineno))
            try:
                self.exec_stmt(s, fr)
            except (Signal, Budget):
                raise
            except ExtractError:
                raise
        if is_enum:
            for k in list(ns):
                v = ns[k]
                if k.startswith("_") or isinstance(v, (FuncObj, ClassObj, Intrinsic)):
                    continue
                if any(k == a[0] for a in cls.ann_nodes) and not any(
                        k == a[0] and a[2] is not None for a in cls.ann_nodes):
                    continue
                ns[k] = EnumMember(cls, k, v)
        if cls.is_enum() and "_ignore_" in ns:
            pass

    # -- expressions -------------------------------------------------------------------------
    def lookup(self, name, fr):
        f = fr
        while f is not None:
            if name in f.locals:
                v = f.locals[name]
                if isinstance(v, LazyImport):
                    v = self.resolve_lazy(v)
                    f.locals[name] = v
                return v
            f = f.parent
        if fr.module is not None and name in fr.module.env:
            v = fr.module.env[name]
            if isinstance(v, LazyImport):
                v = self.resolve_lazy(v)
                fr.module.env[name] = v
            return v
        if name in BUILTINS:
            return BUILTINS[name]
        return Unknown(f"name {name}")

    def eval(self, node, fr):
        self.tick()
        m = getattr(self, "ev_" + type(node).__name__, None)
        if m is None:
            return Unknown(type(node).__name__)
        return m(node, fr)

    def ev_Constant(self, n, fr):
        return n.value

    def ev_Name(self, n, fr):
        return self.lookup(n.id, fr)

    def ev_Attribute(self, n, fr):
        return self.getattr(self.eval(n.value, fr), n.attr)

    def ev_Subscript(self, n, fr):
        base = self.eval(n.value, fr)
        if isinstance(n.slice, ast.Tuple):
            key = tuple(self.eval(e, fr) for e in n.slice.elts)
            multi = True
        else:
            key = self.eval(n.slice, fr)
            multi = False
        return self.subscript(base, key, multi, fr)

    def ev_Slice(self, n, fr):
        lo = self.eval(n.lower, fr) if n.lower else None
        hi = self.eval(n.upper, fr) if n.upper else None
        st = self.eval(n.step, fr) if n.step else None
        if all(isinstance(x, (int, type(None))) for x in (lo, hi, st)):
            return slice(lo, hi, st)
        return Unknown("slice")

    def ev_List(self, n, fr):
        return self.seq_elts(n.elts, fr, list)

    def ev_Tuple(self, n, fr):
        r = self.seq_elts(n.elts, fr, list)
        return tuple(r) if isinstance(r, list) else r

    def ev_Set(self, n, fr):
        r = self.seq_elts(n.elts, fr, list)
        if isinstance(r, list):
            try:
                return set(r)
            except TypeError:
                return Unknown("set")
        return r

    def seq_elts(self, elts, fr, kind):
        out = []
        for e in elts:
            if isinstance(e, ast.Starred):
                it = self.iterate(self.eval(e.value, fr))
                if it is None:
                    return Unknown("starred")
                out.extend(it)
            else:
                out.append(self.eval(e, fr))
        return out

    def ev_Dict(self, n, fr):
        out = {}
        for k, v in zip(n.keys, n.values):
            if k is None:
                d = self.eval(v, fr)
                if isinstance(d, dict):
                    out.update(d)
                else:
                    return Unknown("dict unpack")
            else:
                kk = self.eval(k, fr)
                try:
                    out[kk] = self.eval(v, fr)
                except TypeError:
                    return Unknown("dict key")
        return out

    def ev_JoinedStr(self, n, fr):
        parts = []
        for v in n.values:
            if isinstance(v, ast.Constant):
                parts.append(str(v.value))
            else:
                x = self.eval(v, fr)
                if not isinstance(x, str):
                    return Unknown("fstring")
                parts.append(x)
        return "".join(parts)

    def ev_FormattedValue(self, n, fr):
        x = self.eval(n.value, fr)
        if isinstance(x, EnumMember):
            x = x.value if concrete(x.value) else x.name
        if not concrete(x):
            return Unknown("fmt")
        spec = ""
        if n.format_spec is not None:
            spec = self.eval(n.format_spec, fr)
            if not isinstance(spec, str):
                return Unknown("fmt")
        try:
            if n.conversion == ord("r"):
                x = repr(x)
            elif n.conversion == ord("s"):
                x = str(x)
            return format(x, spec)
        except Exception:
            return Unknown("fmt")

    def ev_BinOp(self, n, fr):
        return self.binop(self.eval(n.left, fr), n.op, self.eval(n.right, fr))

    def binop(self, a, op, b):
        if isinstance(op, ast.BitOr) and (_is_typeish(a) or _is_typeish(b)) and not (
                isinstance(a, (set, dict, int)) and isinstance(b, (set, dict, int))):
            return TUnion([NONE_T if a is None else a, NONE_T if b is None else b])
        if isinstance(op, ast.Mod) and isinstance(a, str) and not concrete(b):
            return Unknown("%")
        if concrete(a) and concrete(b) or (isinstance(a, (list, tuple)) and isinstance(b, (list, tuple))
                                           and isinstance(op, ast.Add)):
            try:
                return BIN_OPS[type(op)](a, b)
            except Exception:
                return Unknown("binop")
        if isinstance(a, (set, frozenset, dict)) and isinstance(b, (set, frozenset, dict)) and \
                isinstance(op, (ast.BitOr, ast.Sub, ast.BitAnd)):
            try:
                return BIN_OPS[type(op)](a, b)
            except Exception:
                return Unknown("binop")
        return Unknown("binop")

    def ev_UnaryOp(self, n, fr):
        v = self.eval(n.operand, fr)
        if isinstance(n.op, ast.Not):
            t = self.truth(v)
            return Unknown("not") if t is None else (not t)
        if concrete(v):
            try:
                return {ast.USub: lambda x: -x, ast.UAdd: lambda x: +x, ast.Invert: lambda x: ~x}[type(n.op)](v)
            except Exception:
                return Unknown("unary")
        return Unknown("unary")

    def ev_BoolOp(self, n, fr):
        is_and = isinstance(n.op, ast.And)
        result_unknown = False
        last = None
        for e in n.values:
            v = self.eval(e, fr)
            t = self.truth(v)
            last = v
            if t is None:
                result_unknown = True
                continue
            if is_and and not t:
                return v if not result_unknown else Unknown("and")
            if not is_and and t:
                return v if not result_unknown else Unknown("or")
        return Unknown("boolop") if result_unknown else last

    def ev_Compare(self, n, fr):
        left = self.eval(n.left, fr)
        for op, rn in zip(n.ops, n.comparators):
            right = self.eval(rn, fr)
            r = self.compare(left, op, right)
            if r is None:
                return Unknown("cmp")
            if not r:
                return False
            left = right
        return True

    @staticmethod
    def same(a, b):
        """Identity as the engine code means it (`x is bool`, `origin is Literal`); None if unknown."""
        if is_unk(a) or is_unk(b):
            return None
        if a is b:
            return True
        if isinstance(a, (ExtRef, BType, TForm)) and type(a) is type(b):
            return a == b
        if concrete(a) and concrete(b):
            return a is b or (a == b and type(a) is type(b) and isinstance(a, (bool, type(None))))
        return False

    def compare(self, a, op, b):
        if isinstance(op, (ast.Is, ast.IsNot)):
            r = self.same(a, b)
            if r is None:
                return None
            return r if isinstance(op, ast.Is) else not r
        if isinstance(op, (ast.In, ast.NotIn)) and isinstance(b, (list, tuple, set, frozenset, dict)) and \
                not concrete(a) and not is_unk(a):
            found, unsure = False, False
            for x in b:
                if concrete(x) and concrete(a):
                    r = x == a
                else:
                    r = self.same(a, x)
                if r is None:
                    unsure = True
                elif r:
                    found = True
                    break
            if not found and unsure:
                return None
            return found if isinstance(op, ast.In) else not found
        if isinstance(op, (ast.In, ast.NotIn)) and isinstance(b, (list, tuple, set, frozenset, dict)) and \
                (concrete(a) or isinstance(a, EnumMember)):
            try:
                r = a in b
                return r if isinstance(op, ast.In) else not r
            except TypeError:
                return None
        if concrete(a) and concrete(b):
            try:
                return bool(CMP_OPS[type(op)](a, b))
            except Exception:
                return None
        if isinstance(op, (ast.Eq, ast.NotEq)) and not is_unk(a) and not is_unk(b):
            if isinstance(a, (set, frozenset)) and isinstance(b, (set, frozenset)):
                try:
                    r = a == b
                    return r if isinstance(op, ast.Eq) else not r
                except Exception:
                    return None
            if isinstance(a, (EnumMember, ClassObj, ExtRef, BType, TForm)) or \
                    isinstance(b, (EnumMember, ClassObj, ExtRef, BType, TForm)):
                r = self.same(a, b)
                if isinstance(a, EnumMember) and concrete(b):
                    r = a.value == b
                if isinstance(b, EnumMember) and concrete(a):
                    r = b.value == a
                return r if isinstance(op, ast.Eq) else not r
        return None

    def ev_IfExp(self, n, fr):
        t = self.truth(self.eval(n.test, fr))
        if t is True:
            return self.eval(n.body, fr)
        if t is False:
            return self.eval(n.orelse, fr)
        a = self.eval(n.body, fr)
        b = self.eval(n.orelse, fr)
        if concrete(a) and concrete(b) and a == b:
            return a
        return Unknown("ifexp")

    def ev_NamedExpr(self, n, fr):
        v = self.eval(n.value, fr)
        self.assign(n.target, v, fr)
        return v

    def ev_Lambda(self, n, fr):
        fn = FuncObj("<lambda>", fr.module, n, closure=fr)
        fn.defaults = self.eval_defaults(n.args, fr)
        return fn

    def eval_defaults(self, a, fr):
        return ([self.eval(d, fr) for d in a.defaults],
                [self.eval(d, fr) if d is not None else None for d in a.kw_defaults])

    def ev_Starred(self, n, fr):
        return Unknown("starred")

    def ev_Await(self, n, fr):
        return Unknown("await")

    def comprehension(self, gens, fr, emit):
        def rec(i, f):
            if i == len(gens):
                emit(f)
                return True
            g = gens[i]
            it = self.iterate(self.eval(g.iter, f))
            if it is None:
                return False
            for item in it:
                self.assign(g.target, item, f)
                ok = True
                skip = False
                for cond in g.ifs:
                    t = self.truth(self.eval(cond, f))
                    if t is None:
                        ok = False
                        break
                    if not t:
                        skip = True
                        break
                if not ok:
                    return False
                if skip:
                    continue
                if not rec(i + 1, f):
                    return False
            return True
        inner = Frame(fr.module, fr, locals_={}, cls=None, func=fr.func or "comp")
        return rec(0, inner)

    def ev_ListComp(self, n, fr):
        out = []
        ok = self.comprehension(n.generators, fr, lambda f: out.append(self.eval(n.elt, f)))
        return out if ok else Unknown("listcomp")

    ev_GeneratorExp = ev_ListComp

    def ev_SetComp(self, n, fr):
        r = self.ev_ListComp(n, fr)
        if isinstance(r, list):
            try:
                return set(r)
            except TypeError:
                return Unknown("setcomp")
        return r

    def ev_DictComp(self, n, fr):
        out = {}

        def emit(f):
            k = self.eval(n.key, f)
            try:
                out[k] = self.eval(n.value, f)
            except TypeError:
                pass
        ok = self.comprehension(n.generators, fr, emit)
        return out if ok else Unknown("dictcomp")

    def ev_Call(self, n, fr):
        func = self.eval(n.func, fr)
        args = []
        for a in n.args:
            if isinstance(a, ast.Starred):
                it = self.iterate(self.eval(a.value, fr))
                if it is None:
                    args.append(Unknown("*args"))
                else:
                    args.extend(it)
            else:
                args.append(self.eval(a, fr))
        kwargs = {}
        for k in n.keywords:
            if k.arg is None:
                d = self.eval(k.value, fr)
                if isinstance(d, dict):
                    kwargs.update({str(kk): vv for kk, vv in d.items()})
                else:
                    kwargs["**"] = Unknown("**kwargs")
            else:
                kwargs[k.arg] = self.eval(k.value, fr)
        if func is BUILTINS["super"] and not args:
            return self.make_super(fr)
        self.call_site = (fr.module.path if fr.module else None, n.lineno)
        return self.call(func, args, kwargs, n, fr)

    def make_super(self, fr):
        f = fr
        while f is not None and f.cls is None:
            f = f.parent
        if f is None or f.func is None:
            return Unknown("super")
        params = f.func.node.args.posonlyargs + f.func.node.args.args
        obj = f.locals.get(params[0].arg) if params else None
        return SuperProxy(f.cls, obj)

    # -- truth / iteration -------------------------------------------------------------------
    def truth(self, v):
        if concrete(v):
            return bool(v)
        if isinstance(v, (list, tuple, dict, set)) or isinstance(v, DICT_VIEWS):
            return bool(v)
        if isinstance(v, (ClassObj, FuncObj, Parser, Instance, ModuleObj, TLit, BType, EnumMember)):
            return True
        return None

    def iterate(self, v):
        if isinstance(v, (list, tuple, str)) or isinstance(v, DICT_VIEWS):
            return list(v)
        if isinstance(v, (set, frozenset)):
            try:
                return sorted(v)
            except TypeError:
                return list(v)
        if isinstance(v, dict):
            return list(v.keys())
        if isinstance(v, ClassObj) and v.is_enum():
            return v.enum_members()
        if isinstance(v, TLit):
            return list(v.values)
        return None

    # -- attribute / subscript ---------------------------------------------------------------
    def getattr(self, obj, name):
        if isinstance(obj, LazyImport):
            obj = self.resolve_lazy(obj)
        if isinstance(obj, ModuleObj):
            obj.ensure()
            if name in obj.env:
                v = self.resolve_lazy(obj.env[name])
                obj.env[name] = v
                return v
            sub = self.get_module(f"{obj.name}.{name}")
            if sub is not None:
                return sub
            lazy = self.module_lazy_attr(obj, name)
            if lazy is not None:
                return lazy
            return Unknown(f"{obj.name}.{name}")
        if isinstance(obj, ClassObj):
            if name == "__name__":
                return obj.name
            if name == "__doc__":
                return ast.get_docstring(obj.node) if obj.node else None
            if name == "__members__" and obj.is_enum():
                return {m.name: m for m in obj.enum_members()}
            if name == "__annotations__":
                obj.ns()
                if obj.ann_override is not None:
                    return dict(obj.ann_override)
                return {a[0]: self.eval_annotation(a[1], Frame(obj.module, obj.outer_env)) for a in obj.ann_nodes}
            if name == "__dict__":
                return dict(obj.ns())
            v, owner = obj.lookup(name)
            if owner is None:
                if obj.is_enum() and name in ("name", "value"):
                    return Unknown("enum attr")
                return Unknown(f"{obj.name}.{name}")
            if isinstance(v, FuncObj):
                if v.kind == "class":
                    return Bound(v, obj)
                return v
            if isinstance(v, FieldSpec):
                return _fieldspec_default(self, v)
            return v
        if isinstance(obj, Instance):
            if name in obj.attrs:
                return obj.attrs[name]
            v, owner = obj.cls.lookup(name)
            if isinstance(v, FuncObj):
                if v.kind == "static":
                    return v
                if v.kind == "class":
                    return Bound(v, obj.cls)
                if v.kind == "property":
                    return self.call(v, [obj], {}, None)
                return Bound(v, obj)
            if isinstance(v, FieldSpec):
                return _fieldspec_default(self, v)
            return v if owner is not None else Unknown(f"{obj.cls.name}().{name}")
        if isinstance(obj, SuperProxy):
            start = obj.cls
            cls = obj.obj if isinstance(obj.obj, ClassObj) else (obj.obj.cls if isinstance(obj.obj, Instance)
                                                                 else start)
            v, owner = cls.lookup(name, start_after=start)
            if isinstance(v, FuncObj):
                if v.kind == "static":
                    return v
                return Bound(v, obj.obj)
            return v if owner is not None else Unknown("super." + name)
        if isinstance(obj, EnumMember):
            if name == "name":
                return obj.name
            if name == "value":
                return obj.value
            v, owner = obj.cls.lookup(name)
            if isinstance(v, FuncObj):
                if v.kind == "property":
                    return self.call(v, [obj], {}, None)
                return Bound(v, obj)
            return Unknown("enum attr")
        if isinstance(obj, Parser):
            if name in obj.attrs:
                return obj.attrs[name]
            return Intrinsic("parser." + name, lambda it, a, k, n, f, p=obj, m=name: it.parser_method(p, m, a, k, n))
        if isinstance(obj, SubParsers):
            return Intrinsic("subparsers." + name,
                             lambda it, a, k, n, f, p=obj, m=name: it.subparsers_method(p, m, a, k, n))
        if isinstance(obj, ExtRef):
            if name == "__module__":
                return obj.name.rpartition(".")[0] or "builtins"
            if name == "__name__":
                return obj.name.rpartition(".")[2]
            return ext_lookup(f"{obj.name}.{name}")
        if isinstance(obj, TLit) and name == "__args__":
            return obj.values
        if isinstance(obj, FieldInfo):
            if name == "name":
                return obj.name
            if name == "type":
                return obj.type
            if name == "default":
                return obj.missing if obj.default is MISSING and obj.missing is not None else obj.default
            if name == "default_factory":
                return obj.missing if obj.factory is MISSING and obj.missing is not None else obj.factory
            if name == "metadata":
                return {}
            if name in ("init", "repr", "compare"):
                return True
            return Unknown("field." + name)
        if isinstance(obj, FieldSpec):
            if name == "default":
                return ExtRef("pydantic_core.PydanticUndefined") if obj.default is MISSING else obj.default
            if name == "default_factory":
                return None if obj.factory is MISSING else obj.factory
            return Unknown("fieldinfo." + name)
        if name == "__module__":
            if isinstance(obj, BType) or obj is None:
                return "builtins"
            if isinstance(obj, ClassObj):
                return obj.module.name if obj.module else "?"
            if isinstance(obj, (TLit, TUnion, TAnn, TGen, TForm)):
                return "typing"
        for typ, names in SAFE_METHODS.items():
            if type(obj) is typ and name in names:
                return PyMethod(obj, name)
        if isinstance(obj, FuncObj) and name == "__name__":
            return obj.name
        return Unknown(f"attr {name}")

    def subscript(self, base, key, multi, fr):
        if isinstance(base, TForm):
            items = list(key) if multi else [key]
            return make_generic(base.name, items, fr.module.path if fr.module else None)
        if isinstance(base, BType) and base.name in ("list", "dict", "tuple", "set", "frozenset", "type"):
            return TGen(base.name, list(key) if multi else [key])
        if isinstance(base, ExtRef):
            last = base.name.split(".")[-1]
            if last in TYPE_WRAPPERS:
                inner = key[0] if multi else key
                return TAnn(inner, [])
            return TGen(base.name, list(key) if multi else [key])
        if isinstance(base, ClassObj):
            if base.is_enum() and isinstance(key, str):
                v = base.ns().get(key)
                return v if isinstance(v, EnumMember) else Unknown("enum[]")
            return base                          # Generic[T] style parametrisation
        if isinstance(base, (list, tuple, str, dict)):
            try:
                return base[key]
            except (KeyError, IndexError, TypeError):
                return Unknown("subscript")
        return Unknown("subscript")

    # -- calls -------------------------------------------------------------------------------
    def call(self, f, args, kwargs, node, fr=None):
        self.tick()
        if isinstance(f, LazyImport):
            f = self.resolve_lazy(f)
        if isinstance(f, Intrinsic):
            return f.fn(self, args, kwargs, node, fr)
        if isinstance(f, BType):
            return builtin_convert(self, f.name, args, kwargs)
        if isinstance(f, ExtRef):
            fn = EXT_CALLS.get(f.name)
            if fn is not None:
                return fn(self, args, kwargs, node, fr)
            self.note_parser_leak(f.name, args, kwargs, node)
            return Unknown(f"call {f.name}")
        if isinstance(f, PyMethod):
            if not all(concrete(a) or isinstance(a, (ClassObj, EnumMember, Instance, FuncObj, BType, ExtRef,
                                                     Parser)) or isinstance(a, (list, tuple, dict, set))
                       for a in list(args) + list(kwargs.values())):
                if f.name in ("append", "add", "extend", "update", "insert"):
                    pass
                else:
                    return Unknown("method")
            try:
                return getattr(f.obj, f.name)(*args, **kwargs)
            except Exception:
                return Unknown("method")
        if isinstance(f, Bound):
            return self.call_func(f.func, [f.obj] + list(args), kwargs, node)
        if isinstance(f, FuncObj):
            if f.kind == "class" and f.owner is not None:
                return self.call_func(f, [f.owner] + list(args), kwargs, node)
            return self.call_func(f, args, kwargs, node)
        if isinstance(f, ClassObj):
            return self.instantiate(f, args, kwargs, node)
        if is_unk(f):
            self.note_parser_leak(repr(f), args, kwargs, node)
        return Unknown("call")

    def note_parser_leak(self, what, args, kwargs, node):
        if any(isinstance(a, Parser) for a in list(args) + list(kwargs.values())):
            path, line = self.call_site
            where = f"{self.relpath(path)}:{line}" if path else "?"
            self.parser_leaks.append((what, where))

    def call_func(self, fn, args, kwargs, node, nohook=False):
        if not nohook:
            hook = self.hooks.get(fn.qualname) or self.hooks.get(fn.name if fn.owner is None else None)
            if hook is not None:
                return hook(self, args, kwargs, node, fn)
        if self.depth >= self.MAX_DEPTH or self.active.get(id(fn), 0) >= self.MAX_RECURSION:
            return Unknown("depth")
        n = fn.node
        fr = Frame(fn.module, fn.closure, locals_={}, cls=fn.owner, func=fn)
        self.bind_args(n.args, args, kwargs, fr, fn)
        self.depth += 1
        self.active[id(fn)] = self.active.get(id(fn), 0) + 1
        saved = (self.cur_file, self.cur_line)
        try:
            if isinstance(n, ast.Lambda):
                return self.eval(n.body, fr)
            self.exec_block(n.body, fr)
            return None
        except ReturnSig as r:
            return r.value
        except (RaiseSig, BreakSig, ContinueSig):
            return Unknown("raised")
        finally:
            self.depth -= 1
            self.active[id(fn)] -= 1
            self.cur_file, self.cur_line = saved

    def bind_args(self, a, args, kwargs, fr, fn):
        params = a.posonlyargs + a.args
        dfl_fr = Frame(fn.module, fn.closure)
        if fn.defaults is None:
            fn.defaults = self.eval_defaults(a, dfl_fr)
        defaults, kw_defaults = fn.defaults
        first_default = len(params) - len(defaults)
        args = list(args)
        for i, p in enumerate(params):
            if i < len(args):
                fr.locals[p.arg] = args[i]
            elif p.arg in kwargs:
                fr.locals[p.arg] = kwargs.pop(p.arg)
            elif i >= first_default:
                fr.locals[p.arg] = defaults[i - first_default]
            else:
                fr.locals[p.arg] = Unknown(f"arg {p.arg}")
        if a.vararg:
            fr.locals[a.vararg.arg] = tuple(args[len(params):])
        for p, d, dv in zip(a.kwonlyargs, a.kw_defaults, kw_defaults):
            if p.arg in kwargs:
                fr.locals[p.arg] = kwargs.pop(p.arg)
            elif d is not None:
                fr.locals[p.arg] = dv
            else:
                fr.locals[p.arg] = Unknown(f"arg {p.arg}")
        if a.kwarg:
            fr.locals[a.kwarg.arg] = {k: v for k, v in kwargs.items() if k != "**"}

    def instantiate(self, cls, args, kwargs, node):
        if any(n.split(".")[-1] == "ArgumentParser" for n in cls.ext_bases()):
            return Parser(self, group=cls.name)
        if cls.is_enum():
            if args and concrete(args[0]):
                for m in cls.enum_members():
                    if m.value == args[0]:
                        return m
            return Unknown("enum()")
        inst = Instance(cls)
        init, owner = cls.lookup("__init__")
        if isinstance(init, FuncObj):
            self.call_func(init, [inst] + list(args), dict(kwargs), node)
            return inst
        if cls.is_dataclass():
            flds = cls.fields()
            for f_ in flds:
                if f_.default is not MISSING or f_.factory is not MISSING:
                    inst.attrs[f_.name] = f_.value(self)
            for f_, v in zip(flds, args):
                inst.attrs[f_.name] = v
            for k, v in kwargs.items():
                inst.attrs[k] = v
        return inst

    # -- argparse stand-ins ------------------------------------------------------------------
    def parser_method(self, p, name, args, kwargs, node):
        if name == "add_argument":
            names = list(args)
            path, line = self.call_site
            file = self.relpath(path) if path else None
            if not names or not all(isinstance(x, str) for x in names):
                self.unresolved.append((names, f"{file}:{line}"))
                return Unknown("action")
            p.records.append(ArgRecord(names, dict(kwargs), file, line, p.group))
            if file:
                self.files_used.add(file)
            return Unknown("action")
        if name in ("add_argument_group", "add_mutually_exclusive_group"):
            title = kwargs.get("title", args[0] if args else None)
            return Parser(self, p.records, title if isinstance(title, str) else p.group)
        if name == "add_subparsers":
            sp = SubParsers(self)
            self.subparsers_created.append(sp)
            return sp
        if name in ("set_defaults", "parse_args", "parse_known_args", "error", "print_help", "format_help"):
            return Unknown(name)
        return Unknown("parser." + name)

    def subparsers_method(self, sp, name, args, kwargs, node):
        if name == "add_parser":
            p = Parser(self, group=args[0] if args and isinstance(args[0], str) else None)
            if args and isinstance(args[0], str):
                sp.parsers[args[0]] = p
            return p
        return Unknown("subparsers." + name)

    # -- annotations -------------------------------------------------------------------------
    def eval_annotation(self, node, fr):
        v = self.eval(node, fr)
        return self.norm_type(v, fr)

    def norm_type(self, v, fr, depth=0):
        if depth > 10:
            return v
        if isinstance(v, str):
            try:
                expr = ast.parse(v.strip(), mode="eval").body
            except SyntaxError:
                return Unknown("annotation")
            return self.norm_type(self.eval(expr, fr), fr, depth + 1)
        if v is None:
            return NONE_T
        if isinstance(v, TUnion):
            return TUnion([self.norm_type(x, fr, depth + 1) for x in v.items])
        if isinstance(v, TAnn):
            return TAnn(self.norm_type(v.inner, fr, depth + 1), v.meta)
        if isinstance(v, TGen):
            return TGen(v.origin, [self.norm_type(x, fr, depth + 1) if not isinstance(x, (list, type(...)))
                                   else x for x in v.args])
        if isinstance(v, Instance) and v.cls.name == "TypeAliasType":
            return v
        return v


def make_generic(form, items, origin_file):
    if form == "Literal":
        vals = []
        for x in items:
            if isinstance(x, TLit):
                vals.extend(x.values)
            elif isinstance(x, TUnion):
                for y in x.items:
                    if isinstance(y, TLit):
                        vals.extend(y.values)
            else:
                vals.append(x)
        return TLit(vals, origin_file)
    if form == "Optional":
        return TUnion([items[0], NONE_T])
    if form == "Union":
        return TUnion([NONE_T if x is None else x for x in items])
    if form == "Annotated":
        return TAnn(items[0], items[1:])
    if form in TYPE_WRAPPERS:
        return TAnn(items[0], [])
    if form in ("TypeAlias", "Unpack"):
        return items[0]
    return TGen(TYPING_GENERIC_ORIGIN.get(form, form), items)


# ============================================================================================
# Builtins and external (non-package) names
# ============================================================================================

def builtin_convert(it, name, args, kwargs):
    if not args:
        return {"list": [], "dict": dict(kwargs), "tuple": (), "set": set(), "str": "", "int": 0,
                "float": 0.0, "bool": False, "frozenset": frozenset()}.get(name, Unknown(name))
    x = args[0]
    if name in ("list", "tuple", "set", "frozenset"):
        items = it.iterate(x)
        if items is None:
            if isinstance(x, PyMethod):
                x = it.call(x, [], {}, None)
                items = it.iterate(x)
            if isinstance(x, (type({}.keys()), type({}.values()), type({}.items()))):
                items = list(x)
        if items is None:
            return Unknown(name)
        try:
            return {"list": list, "tuple": tuple, "set": set, "frozenset": frozenset}[name](items)
        except TypeError:
            return Unknown(name)
    if name == "dict":
        if isinstance(x, dict):
            d = dict(x)
            d.update(kwargs)
            return d
        items = it.iterate(x)
        if items is not None:
            try:
                return dict(items)
            except (TypeError, ValueError):
                return Unknown("dict")
        return Unknown("dict")
    if name == "str":
        if isinstance(x, EnumMember):
            return x.value if isinstance(x.value, str) else Unknown("str(enum)")
        return str(x) if concrete(x) else Unknown("str")
    if name in ("int", "float", "bool"):
        try:
            return {"int": int, "float": float, "bool": bool}[name](x) if concrete(x) else Unknown(name)
        except Exception:
            return Unknown(name)
    if name == "type":
        if x is None:
            return NONE_T
        if isinstance(x, PRIMS) or isinstance(x, (list, tuple, dict, set, frozenset)):
            return BUILTIN_TYPES.get(type(x).__name__, Unknown("type()"))
        if isinstance(x, Instance):
            return x.cls
        if isinstance(x, EnumMember):
            return x.cls
        if isinstance(x, (ClassObj, BType)):
            return BUILTIN_TYPES["type"]
        return Unknown("type()")
    return Unknown(name)


def _b_sorted(it, args, kwargs, node, fr):
    items = it.iterate(args[0]) if args else None
    if items is None and args and isinstance(args[0], (type({}.keys()), type({}.values()))):
        items = list(args[0])
    if items is None:
        return Unknown("sorted")
    key = kwargs.get("key")
    try:
        if key is None:
            return sorted(items, reverse=bool(kwargs.get("reverse", False)))
        return sorted(items, key=lambda x: _sort_key(it, key, x))
    except TypeError:
        try:
            return sorted(items, key=lambda x: str(x))
        except Exception:
            return list(items)


def _sort_key(it, key, x):
    r = it.call(key, [x], {}, None)
    return r if concrete(r) else str(r)


def _b_len(it, args, kwargs, node, fr):
    x = args[0] if args else None
    if isinstance(x, (list, tuple, dict, set, str, frozenset)):
        return len(x)
    return Unknown("len")


def _b_isinstance(it, args, kwargs, node, fr):
    if len(args) != 2:
        return Unknown("isinstance")
    x, t = args
    ts = t if isinstance(t, tuple) else (t,)
    if concrete(x) or isinstance(x, (list, dict, tuple, set)):
        names = {"str": str, "int": int, "float": float, "bool": bool, "list": list, "dict": dict,
                 "tuple": tuple, "set": set, "bytes": bytes, "frozenset": frozenset, "object": object}
        res = None
        for tt in ts:
            if isinstance(tt, BType) and tt.name in names:
                if isinstance(x, names[tt.name]):
                    return True
                res = False
            elif isinstance(tt, BType):
                res = False
            elif isinstance(tt, (ExtRef, ClassObj)):
                # a plain constant is not an instance of a package / third-party class
                name = tt.name.split(".")[-1]
                if name in ("Sequence", "Iterable", "Collection", "Mapping", "Hashable", "Container") or \
                        "Enum" in name:
                    return Unknown("isinstance")
                res = False
            else:
                return Unknown("isinstance")
        return res if res is not None else Unknown("isinstance")
    if isinstance(x, Instance):
        for tt in ts:
            if isinstance(tt, ClassObj):
                if any(c is tt for c in x.cls.mro()):
                    return True
            elif isinstance(tt, BType) and tt.name in ("str", "int", "float", "bool", "list", "dict", "tuple", "set"):
                continue
            else:
                return Unknown("isinstance")
        return False
    if isinstance(x, (ClassObj, BType, ExtRef)) and all(isinstance(tt, BType) for tt in ts):
        return any(tt.name in ("type", "object") for tt in ts)
    if isinstance(x, (TLit, TUnion, TAnn, TGen, TForm)) and all(isinstance(tt, BType) for tt in ts):
        return any(tt.name == "object" for tt in ts)
    if isinstance(x, FieldSpec):
        return any(isinstance(tt, ExtRef) and tt.name.endswith("FieldInfo") for tt in ts) and x.kind == "pydantic"
    if isinstance(x, (EnumMember,)) and all(isinstance(tt, BType) for tt in ts):
        return any(tt.name == "str" for tt in ts) and isinstance(x.value, str) and \
            any(n.endswith("StrEnum") or n == "str" for n in x.cls.ext_bases())
    return Unknown("isinstance")


def _b_getattr(it, args, kwargs, node, fr):
    if len(args) >= 2 and isinstance(args[1], str):
        v = it.getattr(args[0], args[1])
        if is_unk(v) and len(args) == 3 and not isinstance(args[0], Unknown):
            return args[2] if isinstance(args[0], (ClassObj, Instance, ModuleObj)) else v
        return v
    return Unknown("getattr")


def _b_hasattr(it, args, kwargs, node, fr):
    if len(args) == 2 and isinstance(args[1], str):
        obj, name = args
        if isinstance(obj, ExtRef) and obj.name == "types" and name == "UnionType":
            return True
        if isinstance(obj, ClassObj):
            v, owner = obj.lookup(name)
            return True if owner is not None else Unknown("hasattr")
    return Unknown("hasattr")


def _b_issubclass(it, args, kwargs, node, fr):
    if len(args) != 2:
        return Unknown("issubclass")
    x, t = args
    ts = t if isinstance(t, tuple) else (t,)
    if isinstance(x, BType):
        return any(isinstance(tt, BType) and tt.name in (x.name, "object") for tt in ts)
    if isinstance(x, ClassObj):
        for tt in ts:
            if isinstance(tt, ClassObj) and any(c is tt for c in x.mro()):
                return True
            if isinstance(tt, (ExtRef, BType)):
                last = tt.name.split(".")[-1]
                if last == "dict" and x.is_dict_subclass():
                    return True
                if any(n.split(".")[-1] == last for n in x.ext_bases()):
                    return True
        return False
    if isinstance(x, ExtRef):
        if all(isinstance(tt, BType) for tt in ts):
            return any(x.name.split(".")[-1].lower() == tt.name for tt in ts)
        if all(isinstance(tt, ClassObj) for tt in ts):
            return False
    return Unknown("issubclass")


def _b_enumerate(it, args, kwargs, node, fr):
    items = it.iterate(args[0]) if args else None
    if items is None:
        return Unknown("enumerate")
    start = kwargs.get("start", args[1] if len(args) > 1 else 0)
    return [(i + start, x) for i, x in enumerate(items)]


def _b_zip(it, args, kwargs, node, fr):
    seqs = [it.iterate(a) for a in args]
    if any(s is None for s in seqs):
        return Unknown("zip")
    return list(zip(*seqs))


def _b_range(it, args, kwargs, node, fr):
    if all(isinstance(a, int) for a in args) and args:
        r = range(*args)
        if len(r) < 100000:
            return list(r)
    return Unknown("range")


def _b_minmax(fn):
    def f(it, args, kwargs, node, fr):
        try:
            if len(args) == 1:
                items = it.iterate(args[0])
                return fn(items) if items is not None and concrete(items) else Unknown("minmax")
            return fn(args) if concrete(list(args)) else Unknown("minmax")
        except Exception:
            return Unknown("minmax")
    return f


def _b_anyall(fn):
    def f(it, args, kwargs, node, fr):
        items = it.iterate(args[0]) if args else None
        if items is None:
            return Unknown("anyall")
        ts = [it.truth(x) for x in items]
        if any(t is None for t in ts):
            return Unknown("anyall")
        return fn(ts)
    return f


def _b_reversed(it, args, kwargs, node, fr):
    items = it.iterate(args[0]) if args else None
    return list(reversed(items)) if items is not None else Unknown("reversed")


def _b_vars(it, args, kwargs, node, fr):
    if args and isinstance(args[0], ClassObj):
        return dict(args[0].ns())
    return Unknown("vars")


def _b_noop(it, args, kwargs, node, fr):
    return None


def _b_repr(it, args, kwargs, node, fr):
    return repr(args[0]) if args and concrete(args[0]) else Unknown("repr")


BUILTINS = {n: BUILTIN_TYPES[n] for n in BUILTIN_TYPES}
BUILTINS.update({
    "None": None, "True": True, "False": False, "Ellipsis": ..., "NotImplemented": Unknown("NotImplemented"),
    "super": Intrinsic("super", lambda it, a, k, n, f: Unknown("super")),
    "sorted": Intrinsic("sorted", _b_sorted), "len": Intrinsic("len", _b_len),
    "isinstance": Intrinsic("isinstance", _b_isinstance), "getattr": Intrinsic("getattr", _b_getattr),
    "hasattr": Intrinsic("hasattr", _b_hasattr), "issubclass": Intrinsic("issubclass", _b_issubclass), "enumerate": Intrinsic("enumerate", _b_enumerate),
    "zip": Intrinsic("zip", _b_zip), "range": Intrinsic("range", _b_range),
    "min": Intrinsic("min", _b_minmax(min)), "max": Intrinsic("max", _b_minmax(max)),
    "any": Intrinsic("any", _b_anyall(any)), "all": Intrinsic("all", _b_anyall(all)),
    "reversed": Intrinsic("reversed", _b_reversed), "vars": Intrinsic("vars", _b_vars),
    "print": Intrinsic("print", _b_noop), "repr": Intrinsic("repr", _b_repr),
    "staticmethod": Intrinsic("staticmethod", lambda it, a, k, n, f: a[0] if a else None),
    "classmethod": Intrinsic("classmethod", lambda it, a, k, n, f: a[0] if a else None),
    "property": Intrinsic("property", lambda it, a, k, n, f: a[0] if a else None),
    "callable": Intrinsic("callable", lambda it, a, k, n, f: Unknown("callable")),
    "iter": Intrinsic("iter", lambda it, a, k, n, f: a[0] if a else Unknown("iter")),
    "next": Intrinsic("next", lambda it, a, k, n, f: _b_next(it, a)),
    "__name__": Unknown("__name__"), "__file__": Unknown("__file__"),
})
for _exc in ("ValueError", "TypeError", "KeyError", "RuntimeError", "ImportError", "AttributeError",
             "NotImplementedError", "Exception", "AssertionError", "ModuleNotFoundError", "OSError",
             "IndexError", "DeprecationWarning", "UserWarning", "FutureWarning", "Warning", "BaseException",
             "FileNotFoundError", "StopIteration", "SystemExit", "KeyboardInterrupt"):
    BUILTINS[_exc] = ExtRef(_exc)


def _b_next(it, a):
    items = it.iterate(a[0]) if a else None
    if items:
        return items[0]
    if len(a) > 1:
        return a[1]
    return Unknown("next")


def _x_get_args(it, args, kwargs, node, fr):
    t = args[0] if args else None
    if isinstance(t, TLit):
        return t.values
    if isinstance(t, TUnion):
        return t.items
    if isinstance(t, TAnn):
        return (t.inner,) + t.meta
    if isinstance(t, TGen):
        return t.args
    if isinstance(t, Instance) and "__value__" in t.attrs:
        return _x_get_args(it, [t.attrs["__value__"]], {}, node, fr)
    return ()                   # as typing.get_args does for plain classes; unknown hints are opaque


def _x_field_kind(kind):
    def f(it, args, kwargs, node, fr):
        d = kwargs.get("default", MISSING)
        if args and d is MISSING:
            d = args[0]
        if d is not MISSING and isinstance(d, ExtRef) and d.name.endswith(("PydanticUndefined", "Ellipsis")):
            d = MISSING
        if d is ...:
            d = MISSING
        return FieldSpec(d, kwargs.get("default_factory", MISSING), kwargs, kind)
    return f


def _type_hints_of(it, cls):
    if isinstance(cls, Instance):
        cls = cls.cls
    if not isinstance(cls, ClassObj):
        return None
    return {f_.name: f_.type for f_ in cls.fields()}


def _x_get_type_hints(it, args, kwargs, node, fr):
    d = _type_hints_of(it, args[0]) if args else None
    if d is None:
        return Unknown("get_type_hints")
    if not kwargs.get("include_extras"):
        d = {k: (v.inner if isinstance(v, TAnn) else v) for k, v in d.items()}
    return d


def _x_fields(sentinel):
    def f(it, args, kwargs, node, fr):
        cls = args[0] if args else None
        if isinstance(cls, Instance):
            cls = cls.cls
        if not isinstance(cls, ClassObj):
            return Unknown("fields")
        out = []
        for f_ in cls.fields():
            g = FieldInfo(f_.name, f_.type, f_.default, f_.doc, f_.origin, f_.owner, factory=f_.factory,
                          missing=sentinel)
            out.append(g)
        return tuple(out)
    return f


def _x_get_origin(it, args, kwargs, node, fr):
    t = args[0] if args else None
    if isinstance(t, TLit):
        return TForm("Literal")
    if isinstance(t, TUnion):
        return TForm("Union")
    if isinstance(t, TAnn):
        return TForm("Annotated")
    if isinstance(t, TGen):
        if t.origin in BUILTIN_TYPES:
            return BUILTIN_TYPES[t.origin]
        return TForm(t.origin) if t.origin in TYPING_FORMS or t.origin in ("ClassVar", "InitVar") else ExtRef(t.origin)
    return None                 # plain classes and unknown (opaque) hints have no origin


def _x_is_dataclass(it, args, kwargs, node, fr):
    x = args[0] if args else None
    if isinstance(x, Instance):
        x = x.cls
    if isinstance(x, ClassObj):
        return x.is_dataclass() and not x.is_enum()
    if is_unk(x):
        return Unknown("is_dataclass")
    return False


def _x_is_typeddict(it, args, kwargs, node, fr):
    x = args[0] if args else None
    if isinstance(x, ClassObj):
        return x.is_typeddict()
    if is_unk(x):
        return Unknown("is_typeddict")
    return False


def _x_typealias(it, args, kwargs, node, fr):
    # TypeAliasType("Name", value) -> the value itself
    return args[1] if len(args) > 1 else kwargs.get("value", Unknown("TypeAliasType"))


def _x_newtype(it, args, kwargs, node, fr):
    return args[1] if len(args) > 1 else Unknown("NewType")


def _x_identity_decorator(it, args, kwargs, node, fr):
    if args and not kwargs and len(args) == 1:
        return args[0]
    return Intrinsic("decorator", lambda it2, a, k, n, f: a[0] if a else Unknown("decorator"))


def _x_partial(it, args, kwargs, node, fr):
    if not args:
        return Unknown("partial")
    f0, rest = args[0], list(args[1:])
    return Intrinsic("partial", lambda it2, a, k, n, f: it2.call(f0, rest + list(a), {**kwargs, **k}, n, f))


def _x_cast(it, args, kwargs, node, fr):
    return args[1] if len(args) > 1 else Unknown("cast")


def _x_defstruct(it, args, kwargs, node, fr):
    """msgspec.defstruct(name, [(name, type[, default]) ...], namespace=...)"""
    name = args[0] if args and isinstance(args[0], str) else "Struct"
    spec = args[1] if len(args) > 1 else kwargs.get("fields")
    ns = kwargs.get("namespace") or {}
    if not isinstance(spec, list):
        return Unknown("defstruct")
    fields = []
    for item in spec:
        if isinstance(item, str):
            fields.append(FieldInfo(item, Unknown("type"), Unknown("default"), None, None, None))
        elif isinstance(item, tuple):
            dflt = item[2] if len(item) > 2 else MISSING
            fields.append(FieldInfo(item[0], it.norm_type(item[1], fr), dflt, None, None, None,
                                    missing=ExtRef("msgspec.NODEFAULT")))
    c = ClassObj(it, name, fr.module if fr else None, None, synth_ns=dict(ns) if isinstance(ns, dict) else {},
                 synth_fields=fields)
    return c


TYPING_FORMS = {"Literal", "Optional", "Union", "Annotated", "ClassVar", "Final", "List", "Dict", "Tuple",
                "Set", "FrozenSet", "Type", "Callable", "Any", "Sequence", "Mapping", "Iterable", "TypeAlias",
                "InitVar", "MutableMapping", "MutableSequence", "DefaultDict", "OrderedDict", "Awaitable",
                "Iterator", "Generator", "AbstractSet", "Collection", "Hashable", "Self", "Never", "NoReturn",
                "LiteralString", "Required", "NotRequired", "ReadOnly", "Unpack", "TypeGuard", "TypeIs"}


def ext_lookup(name):
    """Value of an external dotted name: typing constructs and a few intrinsics; else an ExtRef."""
    mod, _, last = name.rpartition(".")
    if mod in ("typing", "typing_extensions", "collections.abc", "dataclasses", "pydantic",
               "pydantic.dataclasses", "collections") or mod.startswith("typing"):
        if last in TYPING_FORMS and not (mod == "collections" and last not in ("OrderedDict",)):
            return TForm(last)
        if last == "TYPE_CHECKING":
            return True
    if last in TYPE_WRAPPERS and mod.startswith("pydantic"):
        return TForm(last)
    if name in EXT_VALUES:
        return EXT_VALUES[name]
    if name in EXT_CALLS:
        return ExtRef(name)
    return ExtRef(name)


EXT_VALUES = {
    "argparse.SUPPRESS": "==SUPPRESS==",
    "dataclasses.MISSING": MISSING,
    "sys.argv": Unknown("sys.argv"),
}

EXT_CALLS = {
    "typing.get_args": _x_get_args, "typing_extensions.get_args": _x_get_args,
    "typing.cast": _x_cast, "typing.NewType": _x_newtype, "typing_extensions.NewType": _x_newtype,
    "typing.TypeVar": lambda it, a, k, n, f: Unknown("TypeVar"),
    "typing_extensions.TypeAliasType": _x_typealias, "typing.TypeAliasType": _x_typealias,
    "dataclasses.field": _x_field_kind("dataclass"), "pydantic.Field": _x_field_kind("pydantic"),
    "pydantic.fields.Field": _x_field_kind("pydantic"), "msgspec.field": _x_field_kind("msgspec"),
    "typing.get_origin": _x_get_origin, "typing_extensions.get_origin": _x_get_origin,
    "typing.get_type_hints": _x_get_type_hints, "typing_extensions.get_type_hints": _x_get_type_hints,
    "dataclasses.fields": _x_fields(MISSING), "msgspec.structs.fields": _x_fields(ExtRef("msgspec.NODEFAULT")),
    "dataclasses.is_dataclass": _x_is_dataclass,
    "typing.is_typeddict": _x_is_typeddict, "typing_extensions.is_typeddict": _x_is_typeddict,
    "dataclasses.dataclass": _x_identity_decorator, "pydantic.dataclasses.dataclass": _x_identity_decorator,
    "functools.lru_cache": _x_identity_decorator, "functools.cache": _x_identity_decorator,
    "functools.cached_property": _x_identity_decorator, "functools.wraps": _x_identity_decorator,
    "typing.final": _x_identity_decorator, "typing_extensions.deprecated": _x_identity_decorator,
    "functools.partial": _x_partial,
    "msgspec.defstruct": _x_defstruct,
    "copy.deepcopy": lambda it, a, k, n, f: _deepcopy(a[0]) if a else Unknown("deepcopy"),
    "copy.copy": lambda it, a, k, n, f: _shallowcopy(a[0]) if a else Unknown("copy"),
    "enum.auto": lambda it, a, k, n, f: Unknown("auto"),
    "os.environ.get": lambda it, a, k, n, f: Unknown("env"),
    "os.getenv": lambda it, a, k, n, f: Unknown("env"),
    "logging.getLogger": lambda it, a, k, n, f: Unknown("logger"),
    "collections.OrderedDict": lambda it, a, k, n, f: builtin_convert(it, "dict", a, k),
    "itertools.permutations": lambda it, a, k, n, f: _x_itertools(it, "permutations", a, k),
    "itertools.combinations": lambda it, a, k, n, f: _x_itertools(it, "combinations", a, k),
    "itertools.product": lambda it, a, k, n, f: _x_itertools(it, "product", a, k),
    "itertools.chain": lambda it, a, k, n, f: _x_itertools(it, "chain", a, k),
}


def _x_itertools(it, name, args, kwargs):
    seqs = [it.iterate(a) if not isinstance(a, int) else a for a in args]
    if any(s is None for s in seqs):
        return Unknown(name)
    try:
        out = list(getattr(itertools, name)(*seqs, **kwargs))
    except Exception:
        return Unknown(name)
    return out if len(out) <= 10000 else Unknown(name)


def _deepcopy(v):
    if isinstance(v, dict):
        return {k: _deepcopy(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_deepcopy(x) for x in v]
    if isinstance(v, set):
        return set(v)
    return v


def _shallowcopy(v):
    if isinstance(v, (dict, list, set)):
        return type(v)(v)
    return v


EXT_CALLS["argparse.ArgumentParser"] = lambda it, a, k, n, f: Parser(it, group="argparse")


# ============================================================================================
# Turning recorded add_argument calls and config fields into table rows
# ============================================================================================

DEPRECATED_RE = re.compile(r"deprecat", re.I)


_DEPRECATION_PATTERNS = [
    re.compile(r"(^|[.!?:;]\s+|\n)\W{0,3}deprecated\b", re.I),          # "[DEPRECATED] ...", "Deprecated alias"
    re.compile(r"(--[\w.-]+`?|\bthis\s+(option|parameter|argument|flag|field|setting|config)|\bit)\s+"
               r"(flag\s+)?(is|has\s+been|are)\s+(now\s+)?deprecated", re.I),   # "--x is deprecated"
    re.compile(r"\(\s*deprecated", re.I),                                 # "(Deprecated: use ...)"
]


def says_deprecated(text):
    """Help / docstring text that marks *this* option deprecated ("[Deprecated] ...", "--x is
    deprecated", "This parameter is deprecated", "(Deprecated)"), not text that only mentions
    something deprecated ("allow deprecated quantization methods", "replaces the deprecated --y",
    "will be deprecated when ...")."""
    if not isinstance(text, str):
        return False
    return any(p.search(text) for p in _DEPRECATION_PATTERNS)


TYPE_FUNC_NAMES = {
    "parse_dataclass": "json", "union_dict_and_str": "json|str", "human_readable_int": "int",
    "human_readable_int_or_auto": "int|auto", "nullable_str": "str", "json_list_type": "json",
    "loads": "json", "parse_reasoning_parser": "str", "optional_str": "str", "str2bool": "bool",
    "parse_bool": "bool", "strtobool": "bool", "float_or_str": "str", "from_cli": "json|int",
}


def _scalar_name(v):
    if isinstance(v, BType):
        return v.name if v.name in ("int", "float", "str", "bool") else ("json" if v.name == "dict" else "str")
    if isinstance(v, ExtRef):
        return "json" if v.name.endswith("loads") else "str"
    if isinstance(v, (FuncObj, Bound)):
        fn = v.func if isinstance(v, Bound) else v
        return TYPE_FUNC_NAMES.get(fn.name, "str")
    if isinstance(v, Intrinsic) and v.name == "partial":
        return "str"
    if isinstance(v, TLit):
        return type(v.values[0]).__name__ if v.values else "str"
    return "str"


def _plain(v):
    """A default value as YAML can show it, or None when it is not a plain constant."""
    if isinstance(v, EnumMember):
        return v.value if isinstance(v.value, str) else v.name
    if isinstance(v, bool) or isinstance(v, (int, float, str)):
        return v
    if v is None:
        return "null"
    if isinstance(v, (list, tuple)) and all(isinstance(x, (bool, int, float, str)) for x in v) and len(v) <= 8:
        return list(v)
    return None


def _choice_list(v):
    if isinstance(v, (list, tuple, set, frozenset)):
        out = []
        for x in (sorted(v, key=str) if isinstance(v, (set, frozenset)) else v):
            if x is None or x == "None":
                continue
            if isinstance(x, EnumMember):
                x = x.value if isinstance(x.value, str) else x.name
            if not isinstance(x, (str, int, float, bool)):
                return None
            out.append(str(x))
        return out
    if isinstance(v, dict):
        return _choice_list(list(v.keys()))
    if isinstance(v, ClassObj) and v.is_enum():
        return [m.name for m in v.enum_members()]
    return None


class OptRow:
    """One option in one release."""

    def __init__(self, name):
        self.name = name
        self.aliases = []
        self.type = "str"
        self.choices = None          # list of str (enforced by argparse or the config validator)
        self.known_values = None     # listed values that are not enforced (Literal[...] | str)
        self.choices_dynamic = False
        self.negatable = False
        self.deprecated = False
        self.hidden = False
        self.default = None
        self.enum = None
        self.json_of = None
        self.optional_value = False
        self.repeatable = False
        self.file = None
        self.key_present = True      # False when the table key is not one of this release's spellings

    def merge(self, other):
        for a in other.aliases:
            if a not in self.aliases and a != self.name:
                self.aliases.append(a)
        if other.choices:
            self.choices = sorted(set(self.choices or []) | set(other.choices), key=str)
        self.negatable |= other.negatable
        self.deprecated |= other.deprecated
        self.choices_dynamic |= other.choices_dynamic


def row_from_record(rec, it, enum_keys):
    flags = [n for n in rec.names if n.startswith("-")]
    if not flags:
        return None                                      # positional (model_tag)
    longs = [n for n in flags if n.startswith("--")]
    primary = (longs or flags)[0]
    row = OptRow(primary.lstrip("-"))
    row.aliases = [n.lstrip("-") for n in flags if n != primary]
    row.file = rec.file
    kw = rec.kw
    action = kw.get("action")
    help_ = kw.get("help")
    act_name = None
    if isinstance(action, str):
        act_name = action
    elif isinstance(action, ExtRef):
        act_name = action.name.split(".")[-1]
    elif isinstance(action, ClassObj):
        act_name = action.name
        bases = [c.name for c in action.mro()] + action.ext_bases()
        if any("BooleanOptionalAction" in b for b in bases):
            act_name = "BooleanOptionalAction"
        if any("Deprecat" in b for b in bases):
            row.deprecated = True
    t = kw.get("type")
    nargs = kw.get("nargs")
    if isinstance(action, ClassObj) and nargs is None:
        # a custom Action whose __init__ defaults nargs=0 (SGLang's DeprecatedAction) takes no value
        init, _owner = action.lookup("__init__")
        if isinstance(init, FuncObj):
            d = _closure_default(it, init, "nargs") if any(
                a_.arg == "nargs" for a_ in init.node.args.args) else None
            if d is None:
                for p_, dn in zip(init.node.args.kwonlyargs, init.node.args.kw_defaults):
                    if p_.arg == "nargs" and isinstance(dn, ast.Constant):
                        d = dn.value
            if d == 0:
                act_name = act_name if act_name and "Store" in act_name else "store_true"
    if act_name == "BooleanOptionalAction":
        row.type, row.negatable = "bool", True
    elif act_name in ("store_true", "store_false") or (act_name and re.search(r"Store(True|False)", act_name)):
        row.type = "bool"
    elif act_name in ("store_const", "append_const") or (act_name and "StoreConst" in act_name):
        row.type = "bool"
    elif act_name == "count":
        row.type = "count"
    elif act_name in ("version", "help"):
        return None
    elif act_name == "StoreBoolean":
        row.type = "true|false"
    else:
        row.type = _scalar_name(t) if t is not None else "str"
        if act_name in ("append", "extend"):
            row.repeatable = True
    if row.type != "bool" and (nargs in ("+", "*") or (isinstance(nargs, int) and not isinstance(nargs, bool))):
        row.type = f"list[{row.type}]"
    elif nargs == "?":
        row.optional_value = True
    if act_name and "Deprecat" in act_name:
        row.deprecated = True
    if kw.get("deprecated") is True:
        row.deprecated = True
    if isinstance(help_, str):
        if help_ == "==SUPPRESS==":
            row.hidden = True
        elif says_deprecated(help_):
            row.deprecated = True
    if "choices" in kw:
        ch = _choice_list(kw["choices"])
        if not ch:              # unknown, or a registry that is filled at import time (empty here)
            row.choices_dynamic = True
        else:
            row.choices = ch
        if row.choices:
            row.choices = list(dict.fromkeys(row.choices))
        if isinstance(kw["choices"], ClassObj) and kw["choices"].is_enum():
            row.enum = enum_keys(kw["choices"])
    mv = kw.get("metavar")
    if isinstance(mv, (list, tuple)) and row.choices is None:
        row.known_values = _choice_list(mv)
        if row.known_values:
            row.known_values = list(dict.fromkeys(row.known_values))
    if "_enum" in kw and isinstance(kw["_enum"], ClassObj):
        row.enum = enum_keys(kw["_enum"])
    if "_json_of" in kw:
        row.json_of = kw["_json_of"]
        if row.type == "str" and not isinstance(t, BType):
            row.type = "json"                         # parsed by a lambda around the dataclass
    if isinstance(t, FuncObj) and t.name == "parse_dataclass":
        cls = _closure_default(it, t, "cls")
        if isinstance(cls, ClassObj):
            row.json_of = cls.name
    d = kw.get("default", MISSING)
    if d is MISSING and act_name in ("store_true", "store_false") and isinstance(action, str):
        d = act_name == "store_false"             # argparse's implicit default
    if d is not MISSING and d != "==SUPPRESS==":
        row.default = _plain(d)
    return row


def _closure_default(it, fn, param):
    a = fn.node.args
    params = a.posonlyargs + a.args
    nd = len(a.defaults)
    if fn.defaults is None:
        fn.defaults = it.eval_defaults(a, Frame(fn.module, fn.closure))
    for i, p in enumerate(params):
        if p.arg == param and i >= len(params) - nd:
            return fn.defaults[0][i - (len(params) - nd)]
    return None


def flatten_hints(t):
    if isinstance(t, TAnn):
        return flatten_hints(t.inner)
    if isinstance(t, TUnion):
        out = []
        for x in t.items:
            out.extend(flatten_hints(x))
        return out
    return [t]


def row_from_field(f, enum_keys):
    """Table row for a key of a JSON config (speculative / compilation config)."""
    row = OptRow(f.name)
    row.file = f.origin
    hints = flatten_hints(f.type)
    names = set()
    for h in hints:
        if isinstance(h, BType):
            names.add(h.name)
        elif isinstance(h, TGen):
            names.add(h.origin)
    lit = next((h for h in hints if isinstance(h, TLit)), None)
    dc = next((h for h in hints if isinstance(h, ClassObj) and h.is_dataclass() and not h.is_enum()), None)
    en = next((h for h in hints if isinstance(h, ClassObj) and h.is_enum()), None)
    if dc is not None:
        row.type, row.json_of = "json", dc.name
    elif "bool" in names and not (names - {"bool", "NoneType"}) and lit is None:
        row.type = "bool"
    elif lit is not None:
        row.type = type(lit.values[0]).__name__ if lit.values else "str"
        vals = [str(v.name if isinstance(v, EnumMember) else v) for v in lit.values if v is not None]
        if "str" in names:
            row.known_values = vals
        else:
            row.choices = vals
    elif en is not None:
        row.type = "str"
        row.enum = enum_keys(en)
    elif names & {"list", "tuple", "set", "Sequence"}:
        g = next(h for h in hints if isinstance(h, TGen) and h.origin in ("list", "tuple", "set", "Sequence"))
        el = g.args[0] if g.args else None
        row.type = f"list[{_field_elem(el)}]"
    elif "int" in names:
        row.type = "int"
    elif "float" in names:
        row.type = "float"
    elif names & {"dict", "Mapping"}:
        row.type = "json"
    elif "bool" in names:
        row.type = "bool"
    else:
        row.type = "str"
    if says_deprecated(f.doc):
        row.deprecated = True
    if f.default is not MISSING and not isinstance(f.default, (FieldSpec, Unknown)):
        row.default = _plain(f.default)
    return row


def _field_elem(el):
    for h in flatten_hints(el) if el is not None else []:
        if isinstance(h, BType) and h.name in ("int", "float", "str", "bool"):
            return h.name
        if isinstance(h, TLit):
            return "str"
    return "str"


def enum_strings(cls, by_name=False):
    """What a user writes for an enum-typed option: the member values when they are all strings
    (str enums are parsed by value), else the member names (enum.auto() / tuple / int values).
    Enums that the engine looks up by member name (attention backends: AttentionBackendEnum[name])
    pass by_name=True."""
    ms = cls.enum_members()
    if not by_name and ms and all(isinstance(m.value, str) for m in ms):
        return [m.value for m in ms]
    return [m.name for m in ms]


def camel_to_snake(name):
    name = name.lstrip("_")
    s = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()
    return s[:-5] if s.endswith("_enum") else s


def find_defs(root, pkg, name):
    """Modules (dotted) that define `name` at top level (class, assignment or annotated assignment)."""
    pat = re.compile(rf"^(class {re.escape(name)}\b|{re.escape(name)}\s*(:[^=]*)?=)", re.M)
    out = []
    for p in sorted(Path(root, pkg).rglob("*.py")):
        try:
            txt = p.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        if name in txt and pat.search(txt):
            rel = p.relative_to(root).with_suffix("")
            parts = list(rel.parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out.append(".".join(parts))
    return out


def load_def(it, root, pkg, name, prefer=()):
    mods = find_defs(root, pkg, name)
    mods.sort(key=lambda m: (0 if m in prefer else 1, m.count("."), m))
    for m in mods:
        v = it.import_value(m, name)
        if not is_unk(v):
            return v, m
    return None, None


# ============================================================================================
# vLLM
# ============================================================================================

VLLM_ENUM_KEYS = {"_Backend": "attention_backend", "AttentionBackendEnum": "attention_backend",
                  "CUDAGraphMode": "cudagraph_mode"}


class Release:
    def __init__(self, engine, version):
        self.engine = engine
        self.version = version
        self.options = {}
        self.sections = {}          # section name -> {key: OptRow}
        self.enums = {}             # key -> list of values
        self.enum_sources = {}      # key -> how it was read
        self.files = set()
        self.notes = []
        self.leaks = []


def _docs_hook(it, args, kwargs, node, fn):
    cls = args[0] if args else None
    if isinstance(cls, Instance):
        cls = cls.cls
    if not isinstance(cls, ClassObj):
        return {}
    out = {}
    for c in cls.mro():
        c.ns()
        for (name, ann, value, doc, lineno) in c.ann_nodes:
            if doc is not None and name not in out:
                out[name] = doc
    return out


def _identity_hook(it, args, kwargs, node, fn):
    return args[0] if args else Unknown("identity")


def pydantic_validated(it, cls):
    """True when the config class is a pydantic dataclass / model (Literal types are enforced)."""
    for c in cls.mro():
        if any(n.startswith("pydantic") for n in c.ext_bases()):
            return True
        if c.node is None:
            continue
        for d in c.node.decorator_list:
            v = it.eval(d.func if isinstance(d, ast.Call) else d, Frame(c.module, c.outer_env))
            if isinstance(v, ExtRef) and v.name.startswith("pydantic"):
                return True
            if isinstance(v, FuncObj) and v.module is not None:
                dc = v.module.ensure().env.get("dataclass")
                dc = it.resolve_lazy(dc) if isinstance(dc, LazyImport) else dc
                if isinstance(dc, ExtRef) and dc.name.startswith("pydantic"):
                    return True
    return False


def config_keys(it, cls, enum_key, rel):
    validated = pydantic_validated(it, cls)
    rows = {}
    for f in cls.fields():
        spec = f.owner.ns().get(f.name) if f.owner is not None else None
        if isinstance(spec, FieldSpec) and spec.kwargs.get("init") is False:
            continue
        if f.name.startswith("_"):
            continue
        row = row_from_field(f, enum_key)
        row.file = rel(f.origin) if f.origin else None
        if not validated and row.choices:
            row.known_values, row.choices = row.choices, None     # plain dataclass: Literal not enforced
        rows[f.name] = row
    return rows


def spec_methods_heuristic(cls):
    """Older SpeculativeConfig (method: Optional[str]): the strings that __post_init__ compares
    `self.method` with or assigns to it."""
    found = []

    def add(v):
        if isinstance(v, str) and v not in found:
            found.append(v)
    for c in cls.mro():
        if c.node is None:
            continue
        for n in ast.walk(c.node):
            if isinstance(n, ast.Compare) and isinstance(n.left, ast.Attribute) and n.left.attr == "method":
                for op, comp in zip(n.ops, n.comparators):
                    if isinstance(op, (ast.Eq, ast.In)):
                        if isinstance(comp, ast.Constant):
                            add(comp.value)
                        elif isinstance(comp, (ast.Tuple, ast.List, ast.Set)):
                            for e in comp.elts:
                                if isinstance(e, ast.Constant):
                                    add(e.value)
            if isinstance(n, ast.Assign) and isinstance(n.value, ast.Constant):
                for tgt in n.targets:
                    if isinstance(tgt, ast.Attribute) and tgt.attr == "method":
                        add(n.value.value)
    return found


def extract_vllm(root, version):
    root = Path(root)
    rel_ = lambda p: str(Path(p).relative_to(root)) if p and str(p).startswith(str(root)) else (str(p) if p else None)
    it = Interp(root, "vllm")
    R = Release("vllm", version)

    def enum_key(cls):
        key = VLLM_ENUM_KEYS.get(cls.name, camel_to_snake(cls.name))
        if key not in R.enums:
            R.enums[key] = enum_strings(cls, by_name=cls.name in VLLM_ENUM_KEYS)
            R.enum_sources[key] = f"{cls.name} ({rel_(cls.origin)})"
            R.files.add(rel_(cls.origin))
        return key

    def kwargs_hook(it_, args, kwargs, node, fn):
        res = it_.call_func(fn, args, kwargs, node, nohook=True)
        cls = args[0] if args else None
        if isinstance(cls, ClassObj) and isinstance(res, dict):
            for c in cls.mro():
                if c.origin:
                    R.files.add(rel_(c.origin))
            for f in cls.fields():
                d = res.get(f.name)
                if not isinstance(d, dict):
                    continue
                hints = flatten_hints(f.type)
                en = next((h for h in hints if isinstance(h, ClassObj) and h.is_enum()), None)
                if en is not None:
                    d["_enum"] = en
                dc = next((h for h in hints if isinstance(h, ClassObj) and h.is_dataclass() and not h.is_enum()),
                          None)
                if dc is not None and d.get("action") is None:
                    d["_json_of"] = dc.name
        return res

    it.hooks.update({"optional_type": _identity_hook, "parse_type": _identity_hook,
                     "get_attr_docs": _docs_hook, "get_kwargs": kwargs_hook})
    au = it.get_module("vllm.engine.arg_utils")
    if au is None:
        raise ExtractError("vllm/engine/arg_utils.py not found")
    au.ensure()
    if "NEEDS_HELP" in au.env:
        au.env["NEEDS_HELP"] = True          # so that field docstrings (deprecation notes) are read

    # -- the `vllm serve` parser ------------------------------------------------------------
    serve_mod = it.get_module("vllm.entrypoints.cli.serve")
    if serve_mod is not None:
        serve_mod.ensure()
        cls = next((v for v in serve_mod.env.values() if isinstance(v, ClassObj) and v.module is serve_mod
                    and "subparser_init" in v.ns()), None)
        if cls is None:
            raise ExtractError("vllm/entrypoints/cli/serve.py: no class with subparser_init")
        inst = it.instantiate(cls, [], {}, None)
        sp = SubParsers(it)
        it.subparsers_created.append(sp)
        it.call(Bound(cls.ns()["subparser_init"], inst), [sp], {}, None)
        entry = "vllm/entrypoints/cli/serve.py"
    else:
        main = it.import_value("vllm.scripts", "main")
        if not isinstance(main, FuncObj):
            raise ExtractError("neither vllm/entrypoints/cli/serve.py nor vllm/scripts.py:main found")
        it.call(main, [], {}, None)
        entry = "vllm/scripts.py"
    serve = None
    for sp in it.subparsers_created:
        if "serve" in sp.parsers:
            serve = sp.parsers["serve"]
        elif serve is None and sp.parsers:
            serve = next(iter(sp.parsers.values()))
    if serve is None or not serve.records:
        raise ExtractError(f"no `serve` sub-parser with arguments found via {entry}")
    R.files.add(entry)
    if it.unresolved:
        raise ExtractError("add_argument calls with unresolved names: " +
                           "; ".join(f"{w} {n}" for n, w in it.unresolved[:10]))
    for rec in serve.records:
        row = row_from_record(rec, it, enum_key)
        if row is None:
            continue
        if row.name in R.options:
            R.options[row.name].merge(row)
        else:
            R.options[row.name] = row
        if rec.file:
            R.files.add(rec.file)
    R.leaks = sorted(set(it.parser_leaks))
    # FlexibleArgumentParser rewrites "-O3" / "-O 3" / "-O=3" into "--optimization-level 3" (0.12+);
    # before that "-O" was a plain alias of --compilation-config (already recorded above).
    for mod in find_defs(root, "vllm", "FlexibleArgumentParser"):
        path = it.module_path(mod)
        txt = path.read_text(encoding="utf-8") if path and path.is_file() else ""
        if 'startswith("-O")' in txt and '"--optimization-level"' in txt and "optimization-level" in R.options:
            row = R.options["optimization-level"]
            if "O" not in row.aliases:
                row.aliases.append("O")
            R.files.add(it.relpath(path))
    every = set(R.options) | {a for r in R.options.values() for a in r.aliases}
    for must in ("tensor-parallel-size", "tp", "model", "port", "host", "kv-cache-dtype", "quantization"):
        if must not in every:
            raise ExtractError(f"option --{must} not found: the parser walk is incomplete")

    # -- JSON config sections -----------------------------------------------------------------
    def section(opt, clsname, prefer):
        if opt not in R.options:
            return None
        cls, mod = load_def(it, root, "vllm", clsname, prefer)
        if not isinstance(cls, ClassObj):
            raise ExtractError(f"--{opt} exists but class {clsname} was not found")
        if not cls.is_dataclass():
            raise ExtractError(f"{clsname} ({mod}) is not a dataclass; its keys cannot be read")
        R.files.add(rel_(cls.origin))
        rows = config_keys(it, cls, enum_key, rel_)
        if not rows:
            raise ExtractError(f"{clsname} has no fields")
        return cls, rows

    spec = section("speculative-config", "SpeculativeConfig", ("vllm.config.speculative", "vllm.config"))
    if spec:
        R.sections["speculative_config"] = spec[1]
    comp = section("compilation-config", "CompilationConfig", ("vllm.config.compilation", "vllm.config"))
    if comp:
        R.sections["compilation_config"] = comp[1]

    # -- enumerations -------------------------------------------------------------------------
    be, mod = load_def(it, root, "vllm", "AttentionBackendEnum")
    if not (isinstance(be, ClassObj) and be.is_enum()):
        be, mod = load_def(it, root, "vllm", "_Backend", ("vllm.platforms.interface",
                                                           "vllm.attention.backends.registry"))
    if not (isinstance(be, ClassObj) and be.is_enum() and be.enum_members()):
        raise ExtractError("attention backend enum (_Backend / AttentionBackendEnum) not found")
    R.enums.pop("attention_backend", None)
    enum_key(be)

    if comp and "cudagraph_mode" in comp[1]:
        cg, mod = load_def(it, root, "vllm", "CUDAGraphMode", ("vllm.config.compilation", "vllm.config"))
        if not (isinstance(cg, ClassObj) and cg.is_enum()):
            raise ExtractError("CompilationConfig.cudagraph_mode exists but enum CUDAGraphMode not found")
        R.enums.pop("cudagraph_mode", None)
        enum_key(cg)

    if spec:
        sm, mod = load_def(it, root, "vllm", "SpeculativeMethod", ("vllm.config.speculative", "vllm.config"))
        if isinstance(sm, TLit) and pydantic_validated(it, spec[0]):
            R.enums["speculative_method"] = [str(v) for v in sm.values]
            R.enum_sources["speculative_method"] = f"SpeculativeMethod Literal ({mod}), enforced by pydantic"
            R.files.add(it.relpath(it.module_path(mod)))
        elif isinstance(sm, TLit):
            vals = [str(v) for v in sm.values]
            vals += [v for v in spec_methods_heuristic(spec[0]) if v not in vals]
            R.enums["speculative_method"] = vals
            R.enum_sources["speculative_method"] = (f"SpeculativeMethod Literal ({mod}) plus the strings "
                                                    "SpeculativeConfig compares `self.method` with (plain "
                                                    "dataclass: the Literal is not enforced)")
            R.files.add(it.relpath(it.module_path(mod)))
        elif "method" in spec[1]:
            row = spec[1]["method"]
            vals = row.choices or row.known_values or spec_methods_heuristic(spec[0])
            if not vals:
                raise ExtractError("SpeculativeConfig.method exists but no method names were found")
            R.enums["speculative_method"] = list(vals)
            R.enum_sources["speculative_method"] = ("SpeculativeConfig.method Literal" if row.choices or
                                                    row.known_values else
                                                    "strings SpeculativeConfig compares `self.method` with "
                                                    "(no SpeculativeMethod Literal in this release)")

    q, mod = load_def(it, root, "vllm", "QuantizationMethods", ("vllm.model_executor.layers.quantization",))
    if isinstance(q, TLit):
        R.enums["quantization"] = [str(v) for v in q.values]
        R.enum_sources["quantization"] = f"QuantizationMethods Literal ({mod})"
    else:
        q, mod = load_def(it, root, "vllm", "QUANTIZATION_METHODS", ("vllm.model_executor.layers.quantization",))
        if not isinstance(q, (list, tuple)) or not q:
            raise ExtractError("QuantizationMethods / QUANTIZATION_METHODS not found")
        R.enums["quantization"] = [str(v) for v in q]
        R.enum_sources["quantization"] = f"QUANTIZATION_METHODS ({mod})"
    R.files.add(it.relpath(it.module_path(mod)))

    cd, mod = load_def(it, root, "vllm", "CacheDType", ("vllm.config.cache", "vllm.config"))
    if isinstance(cd, TLit):
        R.enums["kv_cache_dtype"] = [str(v) for v in cd.values]
        R.enum_sources["kv_cache_dtype"] = f"CacheDType Literal ({mod})"
        R.files.add(it.relpath(it.module_path(mod)))
    else:
        row = R.options["kv-cache-dtype"]
        if not row.choices:
            raise ExtractError("CacheDType not found and --kv-cache-dtype has no choices")
        R.enums["kv_cache_dtype"] = list(row.choices)
        R.enum_sources["kv_cache_dtype"] = "--kv-cache-dtype choices (no CacheDType Literal in this release)"
    R.files = {f for f in R.files if f}
    return R


# ============================================================================================
# SGLang
# ============================================================================================

def compared_strings(files, varname):
    """String constants that `<varname> == "X"` / `<varname> in ("X", ...)` compares against."""
    out = []
    for f in files:
        if not f.is_file():
            continue
        try:
            tree = ast.parse(f.read_text(encoding="utf-8"))
        except SyntaxError:
            continue
        for n in ast.walk(tree):
            if not isinstance(n, ast.Compare):
                continue
            left = n.left
            name = left.id if isinstance(left, ast.Name) else (left.attr if isinstance(left, ast.Attribute) else None)
            if name != varname:
                continue
            for op, comp in zip(n.ops, n.comparators):
                if not isinstance(op, (ast.Eq, ast.In)):
                    continue
                elts = comp.elts if isinstance(comp, (ast.Tuple, ast.List, ast.Set)) else [comp]
                for e in elts:
                    if isinstance(e, ast.Constant) and isinstance(e.value, str) and e.value not in out:
                        out.append(e.value)
    return out


def extract_sglang(root, version):
    root = Path(root)
    rel_ = lambda p: str(Path(p).relative_to(root)) if p and str(p).startswith(str(root)) else (str(p) if p else None)
    it = Interp(root, "sglang")
    R = Release("sglang", version)

    def enum_key(cls):
        key = camel_to_snake(cls.name)
        if key not in R.enums:
            R.enums[key] = enum_strings(cls)
            R.enum_sources[key] = f"{cls.name} ({rel_(cls.origin)})"
        return key

    sa = it.get_module("sglang.srt.server_args")
    if sa is None:
        raise ExtractError("sglang/srt/server_args.py not found")
    cls = it.import_value("sglang.srt.server_args", "ServerArgs")
    if not isinstance(cls, ClassObj):
        raise ExtractError("ServerArgs class not found in sglang/srt/server_args.py")
    fn, owner = cls.lookup("add_cli_args")
    if not isinstance(fn, FuncObj):
        raise ExtractError("ServerArgs.add_cli_args not found")
    parser = Parser(it, group="ServerArgs")
    it.call(fn, [parser], {}, None)
    R.files.add("sglang/srt/server_args.py")
    if it.unresolved:
        raise ExtractError("add_argument calls with unresolved names: " +
                           "; ".join(f"{w} {n}" for n, w in it.unresolved[:10]))
    if not parser.records:
        raise ExtractError("ServerArgs.add_cli_args registered no arguments")
    for rec in parser.records:
        row = row_from_record(rec, it, enum_key)
        if row is None:
            continue
        if row.name in R.options:
            R.options[row.name].merge(row)
        else:
            R.options[row.name] = row
        if rec.file:
            R.files.add(rec.file)
    R.leaks = sorted(set(it.parser_leaks))
    every = set(R.options) | {a for r in R.options.values() for a in r.aliases}
    for must in ("model-path", "tp-size", "port", "host", "kv-cache-dtype", "quantization", "attention-backend"):
        if must not in every:
            raise ExtractError(f"option --{must} not found: the parser walk is incomplete")

    def from_option(key, opt, required=True):
        row = R.options.get(opt)
        if row is None or not row.choices:
            if required:
                raise ExtractError(f"--{opt} has no choices")
            return False
        R.enums[key] = list(row.choices)
        R.enum_sources[key] = f"--{opt} choices"
        return True

    from_option("attention_backend", "attention-backend")
    from_option("kv_cache_dtype", "kv-cache-dtype")
    from_option("quantization", "quantization")
    from_option("grammar_backend", "grammar-backend")
    if "speculative-algorithm" in R.options and \
            not from_option("speculative_algorithm", "speculative-algorithm", required=False):
        # open-ended option: the builtins are the SpeculativeAlgorithm enum members (matched upper-cased)
        # plus the names from_string() maps onto them (_RESERVED_ALIASES, e.g. NEXTN -> EAGLE)
        sa_cls, mod = load_def(it, root, "sglang", "SpeculativeAlgorithm", ("sglang.srt.speculative.spec_info",))
        if not (isinstance(sa_cls, ClassObj) and sa_cls.is_enum()):
            raise ExtractError("--speculative-algorithm has no choices and no SpeculativeAlgorithm enum was found")
        vals = [m.name for m in sa_cls.enum_members() if m.name != "NONE"]
        aliases = it.import_value(mod, "_RESERVED_ALIASES")
        if isinstance(aliases, (list, tuple, set, frozenset, dict)):
            vals += [a for a in sorted(aliases) if isinstance(a, str) and a not in vals]
        # names the argument resolution rewrites before from_string() (NEXTN -> EAGLE in 0.5.12-0.5.19)
        files = [root / "sglang/srt/server_args.py"] + sorted((root / "sglang/srt/arg_groups").rglob("*.py"))
        rewritten = compared_strings(files, "speculative_algorithm")
        vals += [a for a in rewritten if a.isupper() and a not in vals]
        R.enums["speculative_algorithm"] = vals
        R.options["speculative-algorithm"].enum = "speculative_algorithm"
        R.enum_sources["speculative_algorithm"] = (f"SpeculativeAlgorithm enum members ({mod}), its "
                                                   "_RESERVED_ALIASES and the names the argument resolution "
                                                   "compares with; the option itself has no argparse choices")
        R.files.add(it.relpath(it.module_path(mod)))
    R.files |= {it.relpath(p) for p in it.fields_origins if p}
    R.files = {f for f in R.files if f}
    return R


# ============================================================================================
# Wheels
# ============================================================================================

def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def unpack_wheel(whl, dest, pkg):
    """Unpack only the package's .py files of a wheel into dest/src; record name and sha256."""
    dest = Path(dest)
    src = dest / "src"
    with zipfile.ZipFile(whl) as z:
        for n in z.namelist():
            if n.startswith(pkg + "/") and n.endswith(".py"):
                z.extract(n, src)
    meta = {"version": Path(whl).name.split("-")[1], "wheel": Path(whl).name, "sha256": sha256_file(whl)}
    (dest / "wheel.json").write_text(json.dumps(meta))
    return dest


def fetch(engine, version, work):
    """pip download one wheel (no deps), unpack its .py files under WORK/<engine>-<version>/, delete it."""
    dest = Path(work) / f"{engine}-{version}"
    if (dest / "wheel.json").exists():
        return dest
    Path(work).mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="whl-", dir=work))
    try:
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
               "--ignore-requires-python", "--no-cache-dir", "-q", f"{engine}=={version}", "-d", str(tmp)]
        subprocess.run(cmd, check=True)
        whls = sorted(tmp.glob("*.whl"))
        if len(whls) != 1:
            raise ExtractError(f"fetch {engine}=={version}: expected one wheel, got {[w.name for w in whls]}")
        if dest.exists():
            shutil.rmtree(dest)
        unpack_wheel(whls[0], dest, engine)
        return dest
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def release_dir(path, engine):
    """Accept an unpacked release dir (with src/ or the package at top), or a .whl file."""
    p = Path(path)
    if p.is_file() and p.suffix == ".whl":
        tmp = Path(tempfile.mkdtemp(prefix="whl-"))
        unpack_wheel(p, tmp, engine)
        return tmp
    return p


def read_release(engine, path):
    d = release_dir(path, engine)
    meta = json.loads((d / "wheel.json").read_text()) if (d / "wheel.json").exists() else {}
    root = d / "src" if (d / "src" / engine).is_dir() else d
    if not (root / engine).is_dir():
        raise ExtractError(f"{path}: no {engine}/ package directory")
    version = meta.get("version")
    if version is None:
        vf = root / engine / "version.py"
        m = re.search(r"__version__\s*=\s*['\"]([^'\"]+)", vf.read_text()) if vf.exists() else None
        version = m.group(1) if m else Path(path).name
    fn = extract_vllm if engine == "vllm" else extract_sglang
    try:
        R = fn(root, version)
    except Budget as e:
        raise ExtractError(f"{engine} {version}: {e}")
    R.meta = meta
    return R


# ============================================================================================
# Tables over releases, YAML
# ============================================================================================

def version_key(v):
    parts = []
    for p in re.split(r"[.]", v):
        m = re.match(r"(\d+)(.*)", p)
        if m:
            parts.append((int(m.group(1)), m.group(2)))
        elif p.startswith("post"):
            parts.append((-1, p))
        else:
            parts.append((-2, p))
    # 0.8.5 < 0.8.5.post1 < 0.8.6 ; 0.9.0 < 0.9.0.1
    out = []
    for n, rest in parts:
        out.append(n if n >= 0 else 0)
        out.append(int(rest[4:]) if rest.startswith("post") and rest[4:].isdigit() else (0 if not rest else -1))
    return tuple(out)


def sort_versions(vs):
    def key(v):
        nums = [int(x) for x in re.findall(r"\d+", v.split("post")[0])]
        post = int(v.split("post")[1]) if "post" in v else -1
        return (nums + [0] * (5 - len(nums)), post)
    return sorted(vs, key=key)


class Ranger:
    def __init__(self, versions):
        self.versions = list(versions)
        self.index = {v: i for i, v in enumerate(self.versions)}

    def fmt(self, present):
        idx = sorted({self.index[v] for v in present})
        if not idx:
            return ""
        runs, start, prev = [], idx[0], idx[0]
        for i in idx[1:]:
            if i == prev + 1:
                prev = i
                continue
            runs.append((start, prev))
            start = prev = i
        runs.append((start, prev))
        last = len(self.versions) - 1
        return ", ".join(f"{self.versions[a]}-" if b == last else f"{self.versions[a]}-{self.versions[b]}"
                         for a, b in runs)


def _valkey(v):
    if isinstance(v, list):
        return json.dumps(v)
    return v


def unify_names(per_release, versions):
    """One table entry per option even when its primary spelling changed (a primary that became an
    alias or the reverse, e.g. --attention-context-parallel-size / --attn-cp-size).  Releases are
    walked newest first; a row joins the entry whose latest spellings it shares, else starts its own
    entry; two rows of one release never share an entry."""
    entries = {}                 # key -> spellings in the newest release that has the entry
    assign = {}
    for v in reversed(versions):
        rows = per_release.get(v, {})
        claimed = set()
        for name in rows:
            if name in entries:
                assign[(v, name)] = name
                claimed.add(name)
        for name, row in rows.items():
            if (v, name) in assign:
                continue
            names = {name, *row.aliases}
            cands = sorted(k for k, sp in entries.items() if k not in claimed and sp & names)
            key = cands[0] if cands else name
            assign[(v, name)] = key
            claimed.add(key)
        for name, row in rows.items():
            entries[assign[(v, name)]] = {name, *row.aliases}
    out = {}
    for v in versions:
        d = {}
        for name, row in per_release.get(v, {}).items():
            key = assign[(v, name)]
            if key != name:
                r2 = OptRow(key)
                r2.__dict__.update({k: x for k, x in row.__dict__.items() if k != "name"})
                r2.key_present = key in row.aliases
                r2.aliases = [name] + [a for a in row.aliases if a != key]
                row = r2
            d[key] = row
        out[v] = d
    return out


def merge_rows(per_release, ranger):
    """per_release: {version: {name: OptRow}} -> {name: ordered dict for YAML}"""
    names = {}
    for v in ranger.versions:
        for n in per_release.get(v, {}):
            names.setdefault(n, None)
    out = {}
    for n in sorted(names):
        present = [v for v in ranger.versions if n in per_release.get(v, {})]
        rows = {v: per_release[v][n] for v in present}
        full = ranger.fmt(present)
        e = {}

        def varying(getter, skip_none=True):
            vals = {}
            for v in present:
                x = getter(rows[v])
                if x is None and skip_none:
                    continue
                vals.setdefault(_valkey(x), []).append(v)
            if not vals:
                return None
            if len(vals) == 1 and len(next(iter(vals.values()))) == len(present):
                return ("one", next(iter(vals)))
            return ("map", {k: ranger.fmt(vs) for k, vs in vals.items()})

        alias = {}
        for v in present:
            for a in rows[v].aliases:
                alias.setdefault(a, []).append(v)
        if alias:
            if all(len(vs) == len(present) for vs in alias.values()):
                e["aliases"] = list(alias)
            else:
                e["aliases"] = {a: ranger.fmt(vs) for a, vs in alias.items()}
        t = varying(lambda r: r.type)
        e["type"] = t[1] if t[0] == "one" else t[1]
        with_choices = [v for v in present if rows[v].choices]
        if with_choices:
            ch = {}
            for v in with_choices:
                for c in rows[v].choices:
                    ch.setdefault(c, []).append(v)
            e["choices"] = {c: ranger.fmt(vs) for c, vs in ch.items()}
            if len(with_choices) != len(present):
                e["choices_releases"] = ranger.fmt(with_choices)
        with_known = [v for v in present if rows[v].known_values]
        if with_known:
            kv = {}
            for v in with_known:
                for c in rows[v].known_values:
                    kv.setdefault(c, []).append(v)
            e["known_values"] = {c: ranger.fmt(vs) for c, vs in kv.items()}
        dyn = [v for v in present if rows[v].choices_dynamic]
        if dyn:
            e["choices_dynamic"] = ranger.fmt(dyn)
        en = varying(lambda r: r.enum)
        if en:
            e["enum"] = en[1] if en[0] == "one" and all(rows[v].enum for v in present) else \
                {k: ranger.fmt([v for v in present if rows[v].enum == k]) for k in
                 dict.fromkeys(rows[v].enum for v in present if rows[v].enum)}
        js = varying(lambda r: r.json_of)
        if js:
            e["json_of"] = js[1] if js[0] == "one" and all(rows[v].json_of for v in present) else \
                {k: ranger.fmt([v for v in present if rows[v].json_of == k]) for k in
                 dict.fromkeys(rows[v].json_of for v in present if rows[v].json_of)}
        for attr in ("negatable", "optional_value", "repeatable", "deprecated", "hidden"):
            on = [v for v in present if getattr(rows[v], attr)]
            if on:
                e[attr] = True if len(on) == len(present) and attr not in ("deprecated", "hidden") else \
                    ranger.fmt(on)
        d = varying(lambda r: r.default)
        if d:
            e["default"] = d[1]
        kp = [v for v in present if rows[v].key_present]
        if len(kp) != len(present):
            e["name_releases"] = ranger.fmt(kp)
        e["releases"] = full
        out[n] = e
    return out


def merge_enums(per_release, ranger):
    keys = {}
    for v in ranger.versions:
        for k in per_release.get(v, {}):
            keys.setdefault(k, None)
    out = {}
    for k in keys:
        vals = {}
        for v in ranger.versions:
            for x in per_release.get(v, {}).get(k, []):
                vals.setdefault(x, []).append(v)
        out[k] = {x: ranger.fmt(vs) for x, vs in vals.items()}
    return out


# --- YAML writer (block mappings of flow mappings; every string that is not a plain word is quoted) --------

_PLAIN = re.compile(r"^[A-Za-z_][A-Za-z0-9_.+/-]*$")
_YAML_WORDS = {"true", "false", "yes", "no", "on", "off", "null", "y", "n", "~"}


def yq(x):
    if x is True:
        return "true"
    if x is False:
        return "false"
    if x is None:
        return "null"
    if isinstance(x, (int, float)):
        return repr(x)
    s = str(x)
    if _PLAIN.match(s) and s.lower() not in _YAML_WORDS and not s.endswith((".", "-")):
        return s
    return json.dumps(s)


def yflow(x):
    if isinstance(x, dict):
        return "{" + ", ".join(f"{yq(k)}: {yflow(v)}" for k, v in x.items()) + "}"
    if isinstance(x, (list, tuple)):
        return "[" + ", ".join(yflow(v) for v in x) + "]"
    if isinstance(x, str) and re.match(r"^\d", x):
        return json.dumps(x)          # ranges and versions are always quoted
    return yq(x)


def write_rows(lines, rows, indent="  "):
    for name, e in rows.items():
        one = f"{indent}{yq(name)}: {yflow(e)}"
        if len(one) <= 150:
            lines.append(one)
        else:
            lines.append(f"{indent}{yq(name)}:")
            for k, v in e.items():
                lines.append(f"{indent}  {k}: {yflow(v)}")


def build_yaml(engine, releases):
    versions = [R.version for R in releases]
    ranger = Ranger(versions)
    lines = [
        f"# {engine} CLI option tables, one entry per option over the releases read (see README.md).",
        "# Generated by tools/options/extract_options.py from the wheels' own argument definitions; do not edit.",
        "# Ranges \"A-B\" are inclusive over the releases listed below; \"A-\" = still present in the newest read.",
        f"engine: {engine}",
        "generated_by: tools/options/extract_options.py",
        f"newest: {yflow(versions[-1])}",
        "releases:",
    ]
    for R in releases:
        m = getattr(R, "meta", {}) or {}
        lines.append(f"  - {{version: {yflow(R.version)}, wheel: {yq(m.get('wheel', '?'))}, "
                     f"sha256: {yq(m.get('sha256', '?'))}, files: {yflow(sorted(R.files))}}}")
    lines.append("options:")
    write_rows(lines, merge_rows(unify_names({R.version: R.options for R in releases}, versions), ranger))
    for sec in ("speculative_config", "compilation_config"):
        per = {R.version: R.sections[sec] for R in releases if sec in R.sections}
        if per:
            lines.append(f"{sec}:")
            write_rows(lines, merge_rows(per, ranger))
    lines.append("enums:")
    enums = merge_enums({R.version: R.enums for R in releases}, ranger)
    for k, vals in enums.items():
        lines.append(f"  {k}: {yflow(vals)}")
    lines.append("enum_sources:")
    srcs = {}
    for R in releases:
        for k, s in R.enum_sources.items():
            srcs.setdefault(k, {}).setdefault(s, []).append(R.version)
    for k, d in srcs.items():
        lines.append(f"  {k}: {yflow({s: ranger.fmt(vs) for s, vs in d.items()})}")
    leaks = {}
    for R in releases:
        for what, where in R.leaks:
            leaks.setdefault(f"{where.split(':')[0]}: {what.strip('<>?')}", []).append(R.version)
    if leaks:
        lines.append("# The parser is handed to code the extractor cannot follow (plugins / platform hooks):")
        lines.append("parser_hooks_not_followed:")
        for k, vs in leaks.items():
            lines.append(f"  - {{at: {yq(k)}, releases: {yflow(ranger.fmt(vs))}}}")
    return "\n".join(lines) + "\n"


# ============================================================================================
# Command line
# ============================================================================================

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    f = sub.add_parser("fetch", help="pip download and unpack the .py files of releases")
    f.add_argument("engine", choices=["vllm", "sglang"])
    f.add_argument("work")
    f.add_argument("versions", nargs="+")
    e = sub.add_parser("extract", help="read one release (unpacked dir or .whl)")
    e.add_argument("engine", choices=["vllm", "sglang"])
    e.add_argument("path")
    e.add_argument("--json", action="store_true", help="dump the release's rows as JSON")
    b = sub.add_parser("build", help="read releases and write the YAML table")
    b.add_argument("engine", choices=["vllm", "sglang"])
    b.add_argument("work", help="directory holding <engine>-<version>/ unpacked releases")
    b.add_argument("out")
    b.add_argument("--versions", nargs="*", help="releases to read (default: every one unpacked in WORK)")
    b.add_argument("--fetch", action="store_true", help="fetch the releases that are not unpacked yet")
    a = ap.parse_args(argv)
    try:
        if a.cmd == "fetch":
            for v in a.versions:
                print(fetch(a.engine, v, a.work), flush=True)
        elif a.cmd == "extract":
            R = read_release(a.engine, a.path)
            if a.json:
                print(json.dumps({"version": R.version, "options": {k: vars(r) for k, r in R.options.items()},
                                  "sections": {s: {k: vars(r) for k, r in rows.items()}
                                               for s, rows in R.sections.items()},
                                  "enums": R.enums, "files": sorted(R.files)}, indent=1, default=str))
            else:
                print(f"{a.engine} {R.version}: {len(R.options)} options, "
                      + ", ".join(f"{s}: {len(r)} keys" for s, r in R.sections.items())
                      + "; enums: " + ", ".join(f"{k} ({len(v)})" for k, v in R.enums.items()))
        else:
            work = Path(a.work)
            versions = a.versions
            if not versions:
                versions = [d.name[len(a.engine) + 1:] for d in work.glob(f"{a.engine}-*")
                            if (d / "wheel.json").exists()]
            versions = sort_versions(versions)
            if not versions:
                raise ExtractError(f"no {a.engine} releases in {work}")
            releases = []
            for v in versions:
                d = work / f"{a.engine}-{v}"
                if not (d / "wheel.json").exists():
                    if not a.fetch:
                        raise ExtractError(f"{d} is not unpacked (use --fetch)")
                    fetch(a.engine, v, work)
                R = read_release(a.engine, d)
                print(f"{a.engine} {v}: {len(R.options)} options", file=sys.stderr, flush=True)
                releases.append(R)
            Path(a.out).parent.mkdir(parents=True, exist_ok=True)
            Path(a.out).write_text(build_yaml(a.engine, releases))
            print(f"wrote {a.out}: {len(releases)} releases", file=sys.stderr)
    except ExtractError as ex:
        print(f"extract_options: error: {ex}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
