/**
 * The Python side of the Code node's Python (run by python-worker.mjs before each program): reads the
 * request in `__input__` (JSON), runs the user's code with n8n's Python names, and leaves the answer in
 * `__output__` (JSON). Everything crosses as JSON: the code sees dicts and lists, never host objects.
 *
 * Two flavours, as n8n has them:
 * - `pyodide` (language `python`, n8n's Pyodide sandbox): n8n's `$` names with `_` (`_input.all()`,
 *   `_input.first()`, `_input.last()`, `_input.item`, `_json`, `_('Node')`, `_items()`, `_prevNode`,
 *   `_workflow`, `_execution`, `_now`, `_today`, `_runIndex`, `_itemIndex`, `_mode`, `_vars`, `_env`,
 *   `_parameter`, and `items`/`item` as n8n's Code node adds them); objects answer both `obj.key` and `obj["key"]` and `to_py()`, as Pyodide's JS proxies do.
 * - `native` (language `pythonNative`, n8n's Python task runner): `_items` (all items) or `_item` (the
 *   item, once per item), plain dicts.
 */
export const PYTHON_PRELUDE = String.raw`
def __n8n_run():
    import json, sys, datetime, math

    request = json.loads(__input__)
    data = request['data']
    flavour = request['flavour']
    mode = request['mode']

    class UserError(Exception):
        pass

    class JsObject(dict):
        __slots__ = ()
        def __getattr__(self, key):
            try:
                return self[key]
            except KeyError:
                raise AttributeError(key) from None
        def __setattr__(self, key, value):
            self[key] = value
        def __delattr__(self, key):
            self.pop(key, None)
        def to_py(self, depth=-1, **kwargs):
            return plain(self)
        def as_object_map(self, **kwargs):
            return self
        def object_keys(self):
            return list(self.keys())
        def object_values(self):
            return list(self.values())
        def object_entries(self):
            return [[k, v] for k, v in self.items()]

    class JsArray(list):
        __slots__ = ()
        @property
        def length(self):
            return len(self)
        def to_py(self, depth=-1, **kwargs):
            return plain(self)

    class LuxonDateTime(datetime.datetime):
        def toISO(self):
            text = self.isoformat(timespec='milliseconds')
            # Luxon writes UTC as Z
            if data.get('timezone') == 'UTC' and text.endswith('+00:00'):
                text = text[:-6] + 'Z'
            return text
        def toISODate(self):
            return self.date().isoformat()
        def toMillis(self):
            return int(self.timestamp() * 1000)
        def toSeconds(self):
            return self.timestamp()
        def toJSON(self):
            return self.toISO()
        def toString(self):
            return self.toISO()
        def __str__(self):
            return self.toISO()

    def wrap(value):
        if isinstance(value, dict):
            return JsObject((k, wrap(v)) for k, v in value.items())
        if isinstance(value, list):
            return JsArray(wrap(v) for v in value)
        return value

    def plain(value):
        if isinstance(value, dict):
            return {k: plain(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [plain(v) for v in value]
        return value

    def parse_date(text):
        if not text:
            return None
        value = datetime.datetime.fromisoformat(text)
        return LuxonDateTime(value.year, value.month, value.day, value.hour, value.minute, value.second,
                             value.microsecond, tzinfo=value.tzinfo)

    def item_of(raw):
        return wrap(raw) if flavour == 'pyodide' else raw

    def install_js_shim():
        # Pyodide code of n8n templates imports a few JavaScript globals (from js import Object, JSON,
        # btoa): a module of Python stand-ins, holding nothing of the host; it is dropped after the run.
        import types, base64

        def to_js_json(value):
            return json.dumps(plain(value), separators=(',', ':'), default=str)

        shim = types.ModuleType('js', 'Python stand-ins for a few JavaScript globals (no JavaScript here)')
        shim.Object = types.SimpleNamespace(
            keys=lambda o: JsArray(o.keys()) if isinstance(o, dict) else JsArray(str(i) for i in range(len(o))),
            values=lambda o: JsArray(o.values()) if isinstance(o, dict) else JsArray(o),
            entries=lambda o: JsArray(JsArray([k, v]) for k, v in (o.items() if isinstance(o, dict) else enumerate(o))),
            fromEntries=lambda pairs: JsObject((k, v) for k, v in pairs),
            assign=lambda target, *sources: [target.update(s) for s in sources] and target or target,
            new=lambda: JsObject(),
        )
        shim.JSON = types.SimpleNamespace(stringify=lambda value, *args: to_js_json(value), parse=lambda text: wrap(json.loads(text)))
        shim.btoa = lambda text: base64.b64encode(text.encode('latin-1')).decode('ascii')
        shim.atob = lambda text: base64.b64decode(text).decode('latin-1')
        shim.console = types.SimpleNamespace(log=print, info=print, warn=print, error=print, debug=print)
        sys.modules['js'] = shim

    input_items = [item_of(i) for i in data.get('input') or []]
    nodes = data.get('nodes') or {}
    paired = data.get('paired') or {}
    all_nodes = data.get('allNodes') or list(nodes)
    state = {'index': 0}

    def node_of(name):
        if name not in nodes:
            if name in all_nodes:
                raise UserError("Node '%s' hasn't been executed" % name)
            raise UserError("Referenced node doesn't exist: '%s'" % name)
        return nodes[name]

    class NodeData:
        def __init__(self, name):
            self._name = name
            self._node = node_of(name)
            self._items = [item_of(i) for i in self._node.get('items') or []]
        def all(self, branch_index=None, run_index=None):
            return JsArray(self._items)
        def first(self, branch_index=None, run_index=None):
            return self._items[0] if self._items else None
        def last(self, branch_index=None, run_index=None):
            return self._items[-1] if self._items else None
        def itemMatching(self, index):
            got = (paired.get(self._name) or {}).get(str(index))
            return item_of(got) if got is not None else None
        def pairedItem(self, index=None):
            return self.itemMatching(state['index'] if index is None else index)
        @property
        def item(self):
            return self.pairedItem()
        @property
        def params(self):
            return wrap(self._node.get('params') or {})
        @property
        def context(self):
            return wrap(self._node.get('context') or {})
        @property
        def isExecuted(self):
            return True
        @property
        def runIndex(self):
            return self._node.get('runIndex', 0)

    class Input:
        def all(self, branch_index=None, run_index=None):
            return JsArray(input_items)
        def first(self, branch_index=None, run_index=None):
            return input_items[0] if input_items else None
        def last(self, branch_index=None, run_index=None):
            return input_items[-1] if input_items else None
        @property
        def item(self):
            return input_items[state['index']] if input_items else None
        @property
        def params(self):
            return wrap(data.get('params') or {})
        @property
        def context(self):
            return JsObject()

    def items_fn(name=None, output_index=0, run_index=-1):
        if name is None:
            return JsArray(input_items)
        return NodeData(name).all()

    def unavailable(what):
        def fail(*args, **kwargs):
            raise UserError('%s is not available in this sandbox' % what)
        return fail

    now = parse_date(data.get('now'))
    today = parse_date(data.get('today'))

    def names_for(index):
        if flavour == 'native':
            if mode == 'runOnceForEachItem':
                return {'_item': input_items[index]}
            return {'_items': input_items}
        item = input_items[index] if input_items else None
        execution = data.get('execution') or {}
        # n8n's Code node adds items (all items) or item (once per item) to its sandbox's names
        legacy = {'item': item} if mode == 'runOnceForEachItem' else {'items': JsArray(input_items)}
        return {
            **legacy,
            '_input': Input(),
            '_': NodeData,
            '_json': item['json'] if item else JsObject(),
            '_binary': (item.get('binary') or JsObject()) if item else JsObject(),
            '_items': items_fn,
            '_itemIndex': index,
            '_runIndex': data.get('runIndex', 0),
            '_mode': execution.get('mode', 'manual'),
            '_prevNode': wrap(data.get('prevNode') or {}),
            '_workflow': wrap(data.get('workflow') or {}),
            '_execution': wrap(execution),
            '_vars': wrap(data.get('vars') or {}),
            '_env': wrap(data.get('env') or {}),
            '_parameter': wrap(data.get('params') or {}),
            '_now': now,
            '_today': today,
            '_jmespath': unavailable('_jmespath'),
            '_getWorkflowStaticData': unavailable('_getWorkflowStaticData'),
        }

    if flavour == 'pyodide':
        install_js_shim()

    source = request['code']
    wrapped = 'async def __n8n_code():\n' + '\n'.join('  ' + line for line in source.split('\n')) + '\n'

    def line_of(tb):
        line = None
        while tb is not None:
            if tb.tb_frame.f_code.co_filename == '<code>':
                line = tb.tb_lineno - 1
            tb = tb.tb_next
        return line

    def describe(error):
        text = '%s: %s' % (type(error).__name__, error) if not isinstance(error, UserError) else str(error)
        if isinstance(error, SyntaxError):
            text = 'SyntaxError: %s' % (error.msg,)
            if error.lineno:
                text += ' (line %d)' % max(1, error.lineno - 1)
            return text
        line = line_of(error.__traceback__)
        if line is not None and not isinstance(error, UserError):
            text += ' (line %d)' % line
        return text

    try:
        compiled = compile(wrapped, '<code>', 'exec')
    except SyntaxError as error:
        return {'ok': False, 'message': describe(error)}

    def call(index):
        state['index'] = index
        env = {'__builtins__': __builtins__, '__name__': '__main__'}
        env.update(names_for(index))
        exec(compiled, env)
        coroutine = env['__n8n_code']()
        try:
            coroutine.send(None)
        except StopIteration as done:
            return done.value
        coroutine.close()
        raise UserError('The code awaits something that never completes here (no event loop in this sandbox)')

    def check_binary(binary, what):
        if not isinstance(binary, dict):
            raise UserError("A 'binary' property isn't a dictionary (%s)" % what)
        out = {}
        for key, file in binary.items():
            if not isinstance(file, dict) or not isinstance(file.get('data'), str):
                raise UserError("Binary property '%s' needs its bytes as a base64 string in 'data' (%s)" % (key, what))
            entry = {'data': file['data'], 'mimeType': file.get('mimeType') if isinstance(file.get('mimeType'), str) else 'application/octet-stream'}
            for meta in ('fileName', 'fileExtension', 'fileType', 'fileSize'):
                if isinstance(file.get(meta), str):
                    entry[meta] = file[meta]
            out[key] = entry
        return out

    def to_item(value, what):
        if not isinstance(value, dict):
            raise UserError("%s isn't a dictionary: return dictionaries, or items in the form {\"json\": {...}}" % what)
        if 'json' in value:
            body = value['json']
            if not isinstance(body, dict):
                raise UserError("A 'json' property isn't a dictionary (%s)" % what)
            item = {'json': body}
            if value.get('binary') is not None:
                item['binary'] = check_binary(value['binary'], what)
            return item
        return {'json': value}

    out = []
    index = 0
    try:
        if mode == 'runOnceForEachItem':
            for index in range(len(input_items)):
                result = call(index)
                if result is None:
                    continue
                if isinstance(result, (list, tuple)):
                    raise UserError("Code doesn't return a single dictionary: in 'Run Once for Each Item' mode return one dictionary (a list belongs to 'Run Once for All Items')")
                item = to_item(result, 'The item returned for item %d' % index)
                item['pairedItem'] = {'item': index}
                out.append(item)
        else:
            result = call(0)
            if result is None:
                pass
            elif isinstance(result, (list, tuple)):
                for i, entry in enumerate(result):
                    out.append(to_item(entry, 'Item %d of the returned list' % i))
            else:
                out.append(to_item(result, 'The returned value'))
    except BaseException as error:
        answer = {'ok': False, 'message': describe(error)}
        if mode == 'runOnceForEachItem':
            answer['itemIndex'] = index
        return answer

    return {'ok': True, 'items': out}


def __n8n_answer():
    import json, datetime, decimal
    def default(value):
        if hasattr(value, 'toISO'):
            return value.toISO()
        if isinstance(value, (datetime.datetime, datetime.date, datetime.time)):
            return value.isoformat()
        if isinstance(value, (set, frozenset)):
            return list(value)
        if isinstance(value, decimal.Decimal):
            return float(value)
        raise TypeError("the code returned a %s, which has no JSON form" % type(value).__name__)
    try:
        answer = __n8n_run()
    except BaseException as error:
        answer = {'ok': False, 'message': '%s: %s' % (type(error).__name__, error)}
    try:
        return json.dumps(answer, default=default, allow_nan=False)
    except BaseException as error:
        return json.dumps({'ok': False, 'message': 'The returned items are not JSON: %s' % (error,)})
`;

/** The program run after the prelude: answers the request. */
export const PYTHON_PROGRAM = '__output__ = __n8n_answer()\n';
