"""ValidationNode checks a model's tool calls against schemas instead of running them.

Each call becomes a ToolMessage: the validated arguments as JSON, or the validation error (marked
``is_error``) for the model to fix. Deprecated in LangGraph 1.0, kept for its tutorials.
LangGraph's ``langgraph.prebuilt.tool_validator``. End of the side trip from channels/base.py.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from langchain_core.messages import AIMessage, ToolCall, ToolMessage
from langchain_core.tools import BaseTool, create_schema_from_function
from pydantic import BaseModel, ValidationError
from pydantic.v1 import BaseModel as BaseModelV1
from pydantic.v1 import ValidationError as ValidationErrorV1
from typing_extensions import deprecated

from lgcheckpoint.warnings import LangGraphDeprecatedSinceV10


def default_format_error(error: BaseException, call: ToolCall, schema: type) -> str:
    return f"{error!r}\n\nRespond after fixing all validation errors."


@deprecated("ValidationNode is deprecated. Please use `create_agent` from `langchain.agents` "
            "with custom tool error handling.", category=LangGraphDeprecatedSinceV10)
class ValidationNode:
    """A node that validates the last AIMessage's tool calls; one ToolMessage per call."""

    def __init__(self, schemas: Sequence[BaseTool | type[BaseModel] | Callable], *,
                 format_error: Callable[[BaseException, ToolCall, type], str] | None = None,
                 name: str = "validation", tags: list[str] | None = None) -> None:
        self.name, self.tags = name, tags
        self.format_error = format_error or default_format_error
        self.schemas_by_name: dict[str, type] = {}
        for schema in schemas:
            if isinstance(schema, BaseTool):
                args = schema.args_schema
                if args is None:
                    raise ValueError(f"Tool {schema.name} does not have an args_schema defined.")
                if not (isinstance(args, type) and issubclass(args, (BaseModel, BaseModelV1))):
                    raise ValueError("Validation node only works with tools that have a pydantic "
                                     f"BaseModel args_schema. Got {schema.name} with "
                                     f"args_schema: {args}.")
                self.schemas_by_name[schema.name] = args
            elif isinstance(schema, type) and issubclass(schema, (BaseModel, BaseModelV1)):
                self.schemas_by_name[schema.__name__] = schema
            elif callable(schema):
                self.schemas_by_name[schema.__name__] = create_schema_from_function(
                    "Validation", schema)
            else:
                raise ValueError("Unsupported input to ValidationNode. Expected BaseModel, tool "
                                 f"or function. Got: {type(schema)}.")

    def __call__(self, input: list | dict, config: dict) -> Any:
        return self.invoke(input, config)

    def invoke(self, input: list | dict, config: dict | None = None) -> Any:
        if isinstance(input, list):
            messages = input
        elif not (messages := input.get("messages", [])):
            raise ValueError("No message found in input")
        if not isinstance(messages[-1], AIMessage):
            raise ValueError("Last message is not an AIMessage")
        out = [self.validate(call) for call in messages[-1].tool_calls]
        return out if isinstance(input, list) else {"messages": out}

    async def ainvoke(self, input: list | dict, config: dict | None = None) -> Any:
        return self.invoke(input, config)  # validating does no I/O

    def validate(self, call: ToolCall) -> ToolMessage:
        schema = self.schemas_by_name[call["name"]]
        try:
            if issubclass(schema, BaseModel):
                content = schema.model_validate(call["args"]).model_dump_json()
            else:
                content = schema.validate(call["args"]).json()
            return ToolMessage(content, name=call["name"], tool_call_id=call["id"])
        except (ValidationError, ValidationErrorV1) as e:
            return ToolMessage(self.format_error(e, call, schema), name=call["name"],
                               tool_call_id=call["id"], additional_kwargs={"is_error": True})
