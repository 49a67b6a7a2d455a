"""``svc sources`` and ``svc destinations``: saved connections; ``svc connectors``: their types."""

from __future__ import annotations

import json
from typing import Any, Callable, Sequence

import click

from . import views
from .app import EXIT_FAILURE, State, cli, pass_state
from .secrets import SecretOptions, collect, refuse_inline, secret_options, secret_options_of
from .support import F, add_list_get_delete, data_option, emit, load_json_object, stdin_is_terminal, table_option

COLUMNS = ("id", "name", "type", "created_at", "updated_at")


def _inline(value: str | None) -> bool:
    """A JSON argument typed on the command line (not @file, not standard input)."""
    return value is not None and value != "-" and not value.startswith("@")


def _parse_sets(pairs: Sequence[str]) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key:
            raise click.UsageError(f"--set takes KEY=VALUE, got {pair!r}")
        try:
            values[key] = json.loads(raw)  # 5432, true, null, "quoted text"
        except json.JSONDecodeError:
            values[key] = raw
    return values


def _body_options(f: F) -> F:
    f = click.option(
        "--set", "sets", multiple=True, metavar="KEY=VALUE",
        help="One configuration field (VALUE is JSON if it parses: 5432, true; else text). Repeatable.",
    )(f)
    f = click.option("--config", help="configuration object as JSON, @file.json or -.")(f)
    f = click.option("--type", "type_", help="Connection type (see `svc connectors list`).")(f)
    f = click.option("--name", "name_", help="Name.")(f)
    return data_option()(f)


def _configuration(
    state: State,
    *,
    data: str | None,
    type_: str | None,
    config: str | None,
    sets: Sequence[str],
    secrets_given: SecretOptions,
    prompt: bool,
    saved_type: Callable[[], str] | None = None,
) -> tuple[dict[str, Any], str | None, dict[str, Any]]:
    """(body from --data, the type, the configuration with its secrets) from the options.

    ``saved_type`` gives the type when the options do not (update of a saved connection)."""
    if data == "-" and config == "-":
        raise click.UsageError("--data and --config cannot both read standard input")
    body = load_json_object(data, "--data")
    extra = load_json_object(config, "--config")
    fields = _parse_sets(sets)
    type_ = type_ or body.get("type") or (saved_type() if saved_type else None)
    configuration = dict(body.get("configuration") or {})
    configuration.update(extra)
    configuration.update(fields)
    if not type_:
        return body, None, configuration
    secrets = state.client().connectors.secrets(type_)
    if _inline(data):
        refuse_inline(body.get("configuration") or {}, secrets, type_, "--data")
    if _inline(config):
        refuse_inline(extra, secrets, type_, "--config")
    refuse_inline(fields, secrets, type_, "--set")
    configuration.update(collect(
        secrets_given, secrets, type_,
        already=[k for k in configuration if k in secrets],
        prompt=prompt,
        interactive=stdin_is_terminal() and "-" not in (data, config),
        stdin_taken="-" in (data, config),
    ))
    return body, type_, configuration


def _connection_group(attr: str, noun: str) -> click.Group:
    @cli.group(name=attr, help=(
        f"Saved {noun}s: list, get, create, update, delete, test, test-draft, discover, hub-items, "
        "hub-folders, hub-layers. Secrets come "
        "from a prompt, --secret-file FIELD=PATH or --secret-stdin FIELD, never from a flag's value."
    ))
    def group() -> None:
        pass

    def collection(state: State) -> Any:
        return getattr(state.client(), attr)

    add_list_get_delete(group, attr, noun, COLUMNS, list_view=views.connections, item_view=views.connection)

    @group.command(help=(
        f"Create a {noun}: --name, --type and its fields (--config, --set). On a terminal you are "
        "asked for each secret field not given by --secret-file/--secret-stdin (Enter leaves it out)."
    ))
    @_body_options
    @secret_options()
    @table_option
    @pass_state
    def create(state: State, /, data: str | None, name_: str | None, type_: str | None, config: str | None,
               sets: tuple[str, ...], **kwargs: Any) -> None:
        given = secret_options_of(kwargs)
        body, type_, configuration = _configuration(
            state, data=data, type_=type_, config=config, sets=sets, secrets_given=given, prompt=True)
        name = name_ or body.get("name")
        missing = [what for what, value in (("--name", name), ("--type", type_)) if not value]
        if missing:
            raise click.UsageError(f"missing {' and '.join(missing)} (or give them in --data)")
        emit(state, collection(state).create(name, type_, configuration), view=views.connection)

    @group.command(help=(
        f"Change a {noun}: only what you give changes. Stored secrets are kept unless replaced "
        "(--secret-file, --secret-stdin) or removed (--clear-secret)."
    ))
    @click.argument("id")
    @_body_options
    @secret_options(clearing=True)
    @table_option
    @pass_state
    def update(state: State, /, id: str, data: str | None, name_: str | None, type_: str | None, config: str | None,
               sets: tuple[str, ...], **kwargs: Any) -> None:
        given = secret_options_of(kwargs)
        connections = collection(state)
        body, new_type, configuration = _configuration(
            state, data=data, type_=type_, config=config, sets=sets, secrets_given=given, prompt=False,
            saved_type=lambda: str(connections.get(id).get("type")))
        name = name_ or body.get("name")
        if not (name or configuration or type_ or body.get("type")):
            raise click.UsageError("nothing to change: give --name, --type, --config, --set or a secret option")
        emit(state, connections.update(id, name=name, type=new_type, configuration=configuration),
             view=views.connection)

    @group.command(help=f"Test a saved {noun}. Exit 1 when the connection does not work.")
    @click.argument("id")
    @table_option
    @click.pass_context
    def test(ctx: click.Context, id: str) -> None:
        state = ctx.ensure_object(State)
        result = collection(state).test(id)
        emit(state, result, view=views.connection_test)
        if not result.get("ok"):
            ctx.exit(EXIT_FAILURE)

    @group.command("test-draft", help=(
        f"Test an unsaved {noun} (--type and its fields; nothing is stored). Exit 1 when it does not work."
    ))
    @_body_options
    @secret_options()
    @table_option
    @click.pass_context
    def test_draft(ctx: click.Context, /, data: str | None, name_: str | None, type_: str | None, config: str | None,
                   sets: tuple[str, ...], **kwargs: Any) -> None:
        state = ctx.ensure_object(State)
        given = secret_options_of(kwargs)
        body, type_, configuration = _configuration(
            state, data=data, type_=type_, config=config, sets=sets, secrets_given=given, prompt=True)
        if not type_:
            raise click.UsageError("missing --type (or give it in --data)")
        result = collection(state).test_draft(type_, configuration, name_ or body.get("name"))
        emit(state, result, view=views.connection_test)
        if not result.get("ok"):
            ctx.exit(EXIT_FAILURE)

    @group.command(help="PostGIS discovery: the schemas, or with --schema its tables and views.")
    @click.argument("id")
    @click.option("--schema", help="List the tables and views of this schema.")
    @table_option
    @pass_state
    def discover(state: State, id: str, schema: str | None) -> None:
        emit(state, collection(state).discover(id, schema=schema), view=views.discovery)

    @group.command("hub-items", help="Search the portal of a hub connection for items (newest first).")
    @click.argument("id")
    @click.option("--q", "q", help='Portal search, e.g. parcels or type:"Feature Service".')
    @click.option("--mine", is_flag=True, help="Only the signed-in user's items.")
    @click.option("--start", type=int, default=1, show_default=True, help="First result (next_start of the previous page).")
    @pass_state
    def hub_items(state: State, id: str, q: str | None, mine: bool, start: int) -> None:
        emit(state, collection(state).hub_items(id, q, owner_only=mine, start=start))

    @group.command("hub-folders", help="The signed-in user's folders on the portal of a hub connection.")
    @click.argument("id")
    @pass_state
    def hub_folders(state: State, id: str) -> None:
        emit(state, collection(state).hub_folders(id))

    @group.command("hub-layers", help="The layers and tables of a feature layer item of a hub connection's portal.")
    @click.argument("id")
    @click.argument("item_id")
    @pass_state
    def hub_layers(state: State, id: str, item_id: str) -> None:
        emit(state, collection(state).hub_layers(id, item_id))

    return group


sources = _connection_group("sources", "Source")
destinations = _connection_group("destinations", "Destination")


@sources.command()
@click.argument("id")
@table_option
@pass_state
def projects(state: State, id: str) -> None:
    """List the projects of a qfieldcloud or merginmaps Source (their ids go in a Job's
    source_resource as "project")."""
    emit(state, state.client().sources.projects(id))


@sources.command("inspect-project")
@click.argument("id")
@click.argument("project")
@click.option("--version", help="Mergin Maps project version (v1, v2 …); default the latest.")
@table_option
@pass_state
def inspect_project(state: State, id: str, project: str, version: str | None) -> None:
    """A project's files and the layers of its vector files (geometry type, CRS, feature count)."""
    emit(state, state.client().sources.inspect_project(id, project, version=version))


@cli.group()
def connectors() -> None:
    """Connection types: their fields, secrets, selectors and targets (no token needed)."""


@connectors.command("list")
@table_option
@pass_state
def connectors_list(state: State) -> None:
    """List the types a Source or Destination can have."""
    emit(state, state.client().connectors.list(), view=views.connectors)


@connectors.command("show")
@click.argument("type")
@table_option
@pass_state
def connectors_show(state: State, type: str) -> None:
    """The fields of a type: what --config and --set take, and which are secrets."""
    emit(state, state.client().connectors.get(type), view=views.connector)
