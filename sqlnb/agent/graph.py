"""The LangGraph graph: generate → execute → decide_next_step over a message history."""

from __future__ import annotations

from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Checkpointer

from sqlnb.agent.nodes import AgentContext, decide_next_step, execute, generate, route
from sqlnb.agent.state import AgentState

# the compiled graph: its state, its run's context, its input and its output
AgentGraph = CompiledStateGraph[AgentState, AgentContext, AgentState, AgentState]


def build_graph(checkpointer: Checkpointer = None) -> AgentGraph:
    """The agent's graph, compiled with ``checkpointer`` (the conversation's memory between
    turns; None: none)."""
    g = StateGraph(AgentState, context_schema=AgentContext)
    g.add_node("generate", generate)
    g.add_node("execute", execute)
    g.add_node("decide_next_step", decide_next_step)
    g.add_edge(START, "generate")
    g.add_edge("generate", "decide_next_step")
    g.add_edge("execute", "decide_next_step")
    g.add_conditional_edges(
        "decide_next_step", route, {"generate": "generate", "execute": "execute", END: END}
    )
    return g.compile(checkpointer=checkpointer)


def recursion_limit(max_iterations: int) -> int:
    """Graph steps a turn may take: per iteration generate, decide, execute, decide."""
    return 4 * max(1, max_iterations) + 8
