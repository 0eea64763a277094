// Output parser tests. Every input below is real output of the pinned CLIs run against
// tests/e2e/mock_provider.js (copies of tests/e2e/fixtures/<cli>/*.txt, bulky fields that
// no parser reads trimmed); see tests/e2e/NOTES.md for how each was produced.
#include <catch2/catch.hpp>

#include <string>
#include <string_view>

#include "exec/output_parser.h"

namespace {

using conclave::domain::FailureKind;
using conclave::exec::ParseCliOutput;
using conclave::exec::ParsedOutput;

// tests/e2e/fixtures/claude/success.txt
constexpr std::string_view kClaudeSuccess = R"FX({"type":"result","subtype":"success","is_error":false,"api_error_status":null,"duration_ms":152,"duration_api_ms":36,"ttft_ms":138,"ttft_stream_ms":136,"time_to_request_ms":119,"num_turns":1,"result":"SUMMARY: Mock worker completed the task as briefed.\nEVIDENCE: scripted reply from the Conclave mock provider.\nCHANGES: none\nRISKS: none\nBLOCKERS: none","stop_reason":"end_turn","session_id":"80e46c28-5b96-455b-87f2-89c4cf2fe8fc","total_cost_usd":0.005039999999999999,"usage":{"input_tokens":900,"cache_creation_input_tokens":0,"cache_read_input_tokens":300,"output_tokens":150,"service_tier":"standard","inference_geo":"","speed":"standard"},"modelUsage":{"claude-sonnet-4-5":{"inputTokens":900,"outputTokens":150,"cacheReadInputTokens":300,"cacheCreationInputTokens":0,"webSearchRequests":0,"costUSD":0.005039999999999999,"contextWindow":200000,"maxOutputTokens":32000}},"permission_denials":[],"terminal_reason":"completed","fast_mode_state":"off","uuid":"d68c402d-91af-400c-89df-238fe75c7831"}
)FX";

// tests/e2e/fixtures/claude/http500.txt
constexpr std::string_view kClaudeHttp500 = R"FX({"type":"result","subtype":"success","is_error":true,"api_error_status":500,"duration_ms":760,"duration_api_ms":0,"num_turns":1,"result":"API Error: 500 Internal server error. This is a server-side issue, usually temporary — try again in a moment. If it persists, check your inference gateway (127.0.0.1:40067).","stop_reason":"stop_sequence","session_id":"9599b752-d317-427e-85a3-8a37fea36e78","total_cost_usd":0,"usage":{"input_tokens":0,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":0,"service_tier":"standard","inference_geo":"","speed":"standard"},"modelUsage":{},"permission_denials":[],"terminal_reason":"completed","fast_mode_state":"off","uuid":"7f4db95b-3074-4070-b899-c32f9b0e5c70"}
)FX";

// tests/e2e/fixtures/claude/http429.txt
constexpr std::string_view kClaudeHttp429 = R"FX({"type":"result","subtype":"success","is_error":true,"api_error_status":429,"duration_ms":7140,"duration_api_ms":0,"num_turns":1,"result":"API Error: Request rejected (429) · Rate limit exceeded: too many requests, please retry later","stop_reason":"stop_sequence","session_id":"74c52ca0-b65b-4abf-ae61-e74ba4bed8bb","total_cost_usd":0,"usage":{"input_tokens":0,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":0,"service_tier":"standard","inference_geo":"","speed":"standard"},"modelUsage":{},"permission_denials":[],"terminal_reason":"completed","fast_mode_state":"off","uuid":"5c2fcb7c-b38b-42a5-a3dc-fec111d0ba58"}
)FX";

// tests/e2e/fixtures/claude/http401.txt
constexpr std::string_view kClaudeHttp401 = R"FX({"type":"result","subtype":"success","is_error":true,"api_error_status":401,"duration_ms":758,"duration_api_ms":0,"num_turns":1,"result":"Invalid API key · Fix external API key","stop_reason":"stop_sequence","session_id":"838ee38b-4154-41c9-82b1-21705b8306f0","total_cost_usd":0,"usage":{"input_tokens":0,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":0,"service_tier":"standard","inference_geo":"","speed":"standard"},"modelUsage":{},"permission_denials":[],"terminal_reason":"completed","fast_mode_state":"off","uuid":"31dd3116-b4cd-4eef-b8cd-0bfb59bd9640"}
)FX";

// tests/e2e/fixtures/claude/refused.txt
constexpr std::string_view kClaudeRefused = R"FX({"type":"result","subtype":"success","is_error":true,"api_error_status":null,"duration_ms":782,"duration_api_ms":0,"num_turns":1,"result":"API Error: Unable to connect to API (ConnectionRefused)","stop_reason":"stop_sequence","session_id":"1c0f96b1-1ae7-4a9f-8b70-3b6ddf593d62","total_cost_usd":0,"usage":{"input_tokens":0,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":0,"service_tier":"standard","inference_geo":"","speed":"standard"},"modelUsage":{},"permission_denials":[],"terminal_reason":"completed","fast_mode_state":"off","uuid":"945cdf1d-bb42-403a-8e6f-79882fac0941"}
)FX";

// tests/e2e/fixtures/claude/budget.txt
constexpr std::string_view kClaudeBudget = R"FX({"type":"result","subtype":"error_max_budget_usd","duration_ms":108,"duration_api_ms":0,"is_error":true,"num_turns":1,"stop_reason":"end_turn","session_id":"d33037fc-ed01-4094-803d-226d44edad30","total_cost_usd":0.005039999999999999,"usage":{"input_tokens":0,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":0,"service_tier":"standard","inference_geo":"","speed":"standard"},"modelUsage":{"claude-sonnet-4-5":{"inputTokens":900,"outputTokens":150,"cacheReadInputTokens":300,"cacheCreationInputTokens":0,"webSearchRequests":0,"costUSD":0.005039999999999999,"contextWindow":200000,"maxOutputTokens":32000}},"permission_denials":[],"fast_mode_state":"off","uuid":"1083fe6c-cd86-4473-9a40-a1a0a656dc94","errors":["Reached maximum budget ($0.001)"]}
)FX";

// tests/e2e/fixtures/claude/findings_schema.txt
constexpr std::string_view kClaudeFindingsSchema = R"FX({"type":"result","subtype":"success","is_error":false,"api_error_status":null,"duration_ms":173,"duration_api_ms":50,"ttft_ms":160,"ttft_stream_ms":153,"time_to_request_ms":134,"num_turns":2,"result":"{\"findings\":[{\"id\":\"F1\",\"severity\":\"HIGH\",\"category\":\"correctness\",\"location\":{\"path\":\"a.cpp\",\"line\":3},\"title\":\"Off-by-one in loop bound\",\"detail\":\"The loop runs to i <= n and reads one element past the end of the buffer.\",\"stance\":\"new\",\"refs\":[]}]}","stop_reason":"tool_use","session_id":"c7962d5a-99f9-4583-bc3c-654c5cbf1757","total_cost_usd":0.005039999999999999,"usage":{"input_tokens":900,"cache_creation_input_tokens":0,"cache_read_input_tokens":300,"output_tokens":150,"service_tier":"standard","inference_geo":"","speed":"standard"},"modelUsage":{"claude-sonnet-4-5":{"inputTokens":900,"outputTokens":150,"cacheReadInputTokens":300,"cacheCreationInputTokens":0,"webSearchRequests":0,"costUSD":0.005039999999999999,"contextWindow":200000,"maxOutputTokens":32000}},"permission_denials":[],"structured_output":{"findings":[{"id":"F1","severity":"HIGH","category":"correctness","location":{"path":"a.cpp","line":3},"title":"Off-by-one in loop bound","detail":"The loop runs to i <= n and reads one element past the end of the buffer.","stance":"new","refs":[]}]},"terminal_reason":"completed","fast_mode_state":"off","uuid":"f4dcab31-8942-41c7-ba4c-e535dfc5af19"}
)FX";

// tests/e2e/fixtures/claude/tool.txt
constexpr std::string_view kClaudeTool = R"FX({"type":"result","subtype":"success","is_error":false,"api_error_status":null,"duration_ms":205,"duration_api_ms":67,"ttft_ms":104,"ttft_stream_ms":102,"time_to_request_ms":88,"num_turns":2,"result":"SUMMARY: Mock worker completed the task as briefed.\nEVIDENCE: scripted reply from the Conclave mock provider; tool output: TOOL_RAN.\nCHANGES: none\nRISKS: none\nBLOCKERS: none","stop_reason":"end_turn","session_id":"8c855dad-b6be-4406-881c-08ea17487f16","total_cost_usd":0.010079999999999999,"usage":{"input_tokens":1800,"cache_creation_input_tokens":0,"cache_read_input_tokens":600,"output_tokens":300,"service_tier":"standard","inference_geo":"","speed":"standard"},"modelUsage":{"claude-sonnet-4-5":{"inputTokens":1800,"outputTokens":300,"cacheReadInputTokens":600,"cacheCreationInputTokens":0,"webSearchRequests":0,"costUSD":0.010079999999999999,"contextWindow":200000,"maxOutputTokens":32000}},"permission_denials":[],"terminal_reason":"completed","fast_mode_state":"off","uuid":"6ac04518-d444-4ffc-97c5-4972b54875e5"}
)FX";

// tests/e2e/fixtures/claude/stream_success.txt
constexpr std::string_view kClaudeStreamSuccess = R"FX({"type":"system","subtype":"init","cwd":"/tmp/e2e/home.kQm3","session_id":"030dbf59-735d-43f8-9610-8d882a0904e8","model":"claude-sonnet-4-5","permissionMode":"default"}
{"type":"assistant","message":{"id":"msg_mx21ibo61","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"SUMMARY: Mock worker completed the task as briefed.\nEVIDENCE: scripted reply from the Conclave mock provider.\nCHANGES: none\nRISKS: none\nBLOCKERS: none"}],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":900,"output_tokens":1,"cache_creation_input_tokens":0,"cache_read_input_tokens":300},"context_management":null},"parent_tool_use_id":null,"session_id":"030dbf59-735d-43f8-9610-8d882a0904e8","uuid":"580769ce-1406-4c69-b60d-f6679fb64cbe"}
{"type":"result","subtype":"success","is_error":false,"api_error_status":null,"duration_ms":135,"duration_api_ms":39,"ttft_ms":128,"ttft_stream_ms":121,"time_to_request_ms":103,"num_turns":1,"result":"SUMMARY: Mock worker completed the task as briefed.\nEVIDENCE: scripted reply from the Conclave mock provider.\nCHANGES: none\nRISKS: none\nBLOCKERS: none","stop_reason":"end_turn","session_id":"030dbf59-735d-43f8-9610-8d882a0904e8","total_cost_usd":0.005039999999999999,"usage":{"input_tokens":900,"cache_creation_input_tokens":0,"cache_read_input_tokens":300,"output_tokens":150,"service_tier":"standard","inference_geo":"","speed":"standard"},"modelUsage":{"claude-sonnet-4-5":{"inputTokens":900,"outputTokens":150,"cacheReadInputTokens":300,"cacheCreationInputTokens":0,"webSearchRequests":0,"costUSD":0.005039999999999999,"contextWindow":200000,"maxOutputTokens":32000}},"permission_denials":[],"terminal_reason":"completed","fast_mode_state":"off","uuid":"9a0cea0f-6d30-4885-8c8b-5cfca9854f9a"}
)FX";

// tests/e2e/fixtures/claude/stream_http500.txt
constexpr std::string_view kClaudeStreamHttp500 = R"FX({"type":"system","subtype":"init","cwd":"/tmp/e2e/home.kQm3","session_id":"780fbb81-712c-49a9-917a-9dbfe68f42d3","model":"claude-sonnet-4-5","permissionMode":"default"}
{"type":"assistant","message":{"id":"db526093-5b1e-4665-a36f-81b5ed8658b2","container":null,"model":"<synthetic>","role":"assistant","stop_details":null,"stop_reason":"stop_sequence","stop_sequence":"","type":"message","usage":{"input_tokens":0,"output_tokens":0,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"service_tier":null,"inference_geo":null,"speed":null},"content":[{"type":"text","text":"API Error: 500 Internal server error. This is a server-side issue, usually temporary — try again in a moment. If it persists, check your inference gateway (127.0.0.1:38481)."}],"context_management":null},"parent_tool_use_id":null,"session_id":"780fbb81-712c-49a9-917a-9dbfe68f42d3","uuid":"43d9a948-4ded-4089-a09b-885299a58572","error":"server_error","request_id":"req_mx21ic9d2"}
{"type":"result","subtype":"success","is_error":true,"api_error_status":500,"duration_ms":125,"duration_api_ms":0,"num_turns":1,"result":"API Error: 500 Internal server error. This is a server-side issue, usually temporary — try again in a moment. If it persists, check your inference gateway (127.0.0.1:38481).","stop_reason":"stop_sequence","session_id":"780fbb81-712c-49a9-917a-9dbfe68f42d3","total_cost_usd":0,"usage":{"input_tokens":0,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":0,"service_tier":"standard","inference_geo":"","speed":"standard"},"modelUsage":{},"permission_denials":[],"terminal_reason":"completed","fast_mode_state":"off","uuid":"57557400-ff5e-47f4-b723-1f8e5951db39"}
)FX";

// tests/e2e/fixtures/claude/deepseek.txt
constexpr std::string_view kClaudeDeepseek = R"FX({"type":"result","subtype":"success","is_error":false,"api_error_status":null,"duration_ms":100,"duration_api_ms":35,"ttft_ms":90,"ttft_stream_ms":90,"time_to_request_ms":74,"num_turns":1,"result":"SUMMARY: Mock worker completed the task as briefed.\nEVIDENCE: scripted reply from the Conclave mock provider.\nCHANGES: none\nRISKS: none\nBLOCKERS: none","stop_reason":"end_turn","session_id":"2f8d0df4-58ce-4bb2-9f6f-94da864888e2","total_cost_usd":0.008400000000000001,"usage":{"input_tokens":900,"cache_creation_input_tokens":0,"cache_read_input_tokens":300,"output_tokens":150,"service_tier":"standard","inference_geo":"","speed":"standard"},"modelUsage":{"deepseek-v4-flash":{"inputTokens":900,"outputTokens":150,"cacheReadInputTokens":300,"cacheCreationInputTokens":0,"webSearchRequests":0,"costUSD":0.008400000000000001,"contextWindow":200000,"maxOutputTokens":32000}},"permission_denials":[],"terminal_reason":"completed","fast_mode_state":"off","uuid":"3574a21d-0442-4c6d-aad1-10ec4a1da8b1"}
)FX";

// tests/e2e/fixtures/claude/text_success.txt
constexpr std::string_view kClaudeTextSuccess = R"FX(SUMMARY: Mock worker completed the task as briefed.
EVIDENCE: scripted reply from the Conclave mock provider.
CHANGES: none
RISKS: none
BLOCKERS: none
)FX";

// tests/e2e/fixtures/codex/success.txt
constexpr std::string_view kCodexSuccess = R"FX({"type":"thread.started","thread_id":"01a22816-a1a1-7643-b510-1c6361f4a151"}
{"type":"item.completed","item":{"id":"item_0","type":"error","message":"Model metadata for `gpt-5-codex` not found. Defaulting to fallback metadata; this can degrade performance and cause issues."}}
{"type":"turn.started"}
{"type":"item.completed","item":{"id":"item_1","type":"agent_message","text":"SUMMARY: Mock worker completed the task as briefed.\nEVIDENCE: scripted reply from the Conclave mock provider.\nCHANGES: none\nRISKS: none\nBLOCKERS: none"}}
{"type":"turn.completed","usage":{"input_tokens":1200,"cached_input_tokens":300,"cache_write_input_tokens":0,"output_tokens":150,"reasoning_output_tokens":0}}
)FX";

// tests/e2e/fixtures/codex/http500.txt
constexpr std::string_view kCodexHttp500 = R"FX({"type":"thread.started","thread_id":"01a22816-b20a-7ec0-b9e5-500678984100"}
{"type":"item.completed","item":{"id":"item_0","type":"error","message":"Model metadata for `gpt-5-codex` not found. Defaulting to fallback metadata; this can degrade performance and cause issues."}}
{"type":"turn.started"}
{"type":"error","message":"We’re currently experiencing high demand, which may cause temporary errors."}
{"type":"turn.failed","error":{"message":"We’re currently experiencing high demand, which may cause temporary errors."}}
)FX";

// tests/e2e/fixtures/codex/http429.txt
constexpr std::string_view kCodexHttp429 = R"FX({"type":"thread.started","thread_id":"01a22816-b364-7102-b5a7-e9cd2036d70c"}
{"type":"item.completed","item":{"id":"item_0","type":"error","message":"Model metadata for `gpt-5-codex` not found. Defaulting to fallback metadata; this can degrade performance and cause issues."}}
{"type":"turn.started"}
{"type":"error","message":"exceeded retry limit, last status: 429 Too Many Requests"}
{"type":"turn.failed","error":{"message":"exceeded retry limit, last status: 429 Too Many Requests"}}
)FX";

// tests/e2e/fixtures/codex/http401.txt
constexpr std::string_view kCodexHttp401 = R"FX({"type":"thread.started","thread_id":"01a22816-b4a8-75c2-907c-2131e06dd561"}
{"type":"item.completed","item":{"id":"item_0","type":"error","message":"Model metadata for `gpt-5-codex` not found. Defaulting to fallback metadata; this can degrade performance and cause issues."}}
{"type":"turn.started"}
{"type":"error","message":"unexpected status 401 Unauthorized: Incorrect API key provided: mock-bad-key., url: http://127.0.0.1:33101/v1/responses"}
{"type":"turn.failed","error":{"message":"unexpected status 401 Unauthorized: Incorrect API key provided: mock-bad-key., url: http://127.0.0.1:33101/v1/responses"}}
)FX";

// tests/e2e/fixtures/codex/tool.txt
constexpr std::string_view kCodexTool = R"FX({"type":"thread.started","thread_id":"01a22816-b5cc-72a0-a657-7d751428258c"}
{"type":"item.completed","item":{"id":"item_0","type":"error","message":"Model metadata for `gpt-5-codex` not found. Defaulting to fallback metadata; this can degrade performance and cause issues."}}
{"type":"turn.started"}
{"type":"item.started","item":{"id":"item_1","type":"command_execution","command":"/bin/bash -lc 'echo hello-from-tool > /tmp/e2e/home.dYUD/touched.txt; echo TOOL_RAN'","aggregated_output":"","exit_code":null,"status":"in_progress"}}
{"type":"item.completed","item":{"id":"item_1","type":"command_execution","command":"/bin/bash -lc 'echo hello-from-tool > /tmp/e2e/home.dYUD/touched.txt; echo TOOL_RAN'","aggregated_output":"TOOL_RAN\n","exit_code":0,"status":"completed"}}
{"type":"item.completed","item":{"id":"item_2","type":"agent_message","text":"SUMMARY: Mock worker completed the task as briefed.\nEVIDENCE: scripted reply from the Conclave mock provider; tool output: Chunk ID: cd89bb Wall time: 0.0000 seconds Process exited with code 0 Original token count: 3 Output: TOOL_RAN.\nCHANGES: none\nRISKS: none\nBLOCKERS: none"}}
{"type":"turn.completed","usage":{"input_tokens":2400,"cached_input_tokens":600,"cache_write_input_tokens":0,"output_tokens":300,"reasoning_output_tokens":0}}
)FX";

// tests/e2e/fixtures/codex/refused.txt
constexpr std::string_view kCodexRefused = R"FX({"type":"thread.started","thread_id":"01a22816-b760-7de2-88b2-a70002c9d2bf"}
{"type":"item.completed","item":{"id":"item_0","type":"error","message":"Model metadata for `gpt-5-codex` not found. Defaulting to fallback metadata; this can degrade performance and cause issues."}}
{"type":"turn.started"}
{"type":"error","message":"Reconnecting... waiting for network (Connection failed: error sending request)"}
{"type":"error","message":"Reconnecting... waiting for network (Connection failed: error sending request)"}
{"type":"error","message":"Reconnecting... waiting for network (Connection failed: error sending request)"}
{"type":"error","message":"Reconnecting... waiting for network (Connection failed: error sending request)"}
{"type":"error","message":"Reconnecting... waiting for network (Connection failed: error sending request)"}
)FX";

// tests/e2e/fixtures/qwen/success.txt
constexpr std::string_view kQwenSuccess = R"FX([{"type":"system","subtype":"init","session_id":"33ed7071-da3e-4714-9bfd-9ec4978dca78","cwd":"/tmp/e2e/home.6Zdg","model":"qwen3-coder-plus","permission_mode":"default","qwen_code_version":"0.15.10"},{"type":"assistant","uuid":"4eca464d-9c34-4869-b144-c1602de7d098","session_id":"33ed7071-da3e-4714-9bfd-9ec4978dca78","parent_tool_use_id":null,"message":{"id":"4eca464d-9c34-4869-b144-c1602de7d098","type":"message","role":"assistant","model":"qwen3-coder-plus","content":[{"type":"text","text":"SUMMARY: Mock worker completed the task as briefed.\nEVIDENCE: scripted reply from the Conclave mock provider.\nCHANGES: none\nRISKS: none\nBLOCKERS: none"}],"stop_reason":null,"usage":{"input_tokens":1200,"output_tokens":150,"cache_read_input_tokens":300,"total_tokens":1350}}},{"type":"result","subtype":"success","uuid":"4433d57a-3619-4473-adc8-97c4907e721f","session_id":"33ed7071-da3e-4714-9bfd-9ec4978dca78","is_error":false,"duration_ms":622,"duration_api_ms":161,"num_turns":1,"result":"SUMMARY: Mock worker completed the task as briefed.\nEVIDENCE: scripted reply from the Conclave mock provider.\nCHANGES: none\nRISKS: none\nBLOCKERS: none","usage":{"input_tokens":2400,"output_tokens":300,"cache_read_input_tokens":600,"total_tokens":2700},"permission_denials":[],"stats":{"models":{"qwen3-coder-plus":{"api":{"totalRequests":2,"totalErrors":0,"totalLatencyMs":119},"tokens":{"prompt":2400,"candidates":300,"total":2700,"cached":600,"thoughts":0}}}}}]
)FX";

// tests/e2e/fixtures/qwen/http500.txt
constexpr std::string_view kQwenHttp500 = R"FX([{"type":"system","subtype":"init","session_id":"7969dfe3-91b7-4907-b25b-ab71881b0b8a","cwd":"/tmp/e2e/home.nxFj","model":"qwen3-coder-plus","permission_mode":"default","qwen_code_version":"0.15.10"},{"type":"assistant","uuid":"21cf3efc-581c-455d-ab11-2004a92efaf6","session_id":"7969dfe3-91b7-4907-b25b-ab71881b0b8a","parent_tool_use_id":null,"message":{"id":"21cf3efc-581c-455d-ab11-2004a92efaf6","type":"message","role":"assistant","model":"qwen3-coder-plus","content":[{"type":"text","text":"[API Error: 500 Internal server error]"}],"stop_reason":null,"usage":{"input_tokens":0,"output_tokens":0}}},{"type":"result","subtype":"success","uuid":"d630b5ac-1bf7-410f-9176-f1c7f004ecb2","session_id":"7969dfe3-91b7-4907-b25b-ab71881b0b8a","is_error":false,"duration_ms":74030,"duration_api_ms":73827,"num_turns":1,"result":"[API Error: 500 Internal server error]","usage":{"input_tokens":0,"output_tokens":0,"cache_read_input_tokens":0},"permission_denials":[],"stats":{"models":{"qwen3-coder-plus":{"api":{"totalRequests":7,"totalErrors":7,"totalLatencyMs":133},"tokens":{"prompt":0,"candidates":0,"total":0,"cached":0,"thoughts":0}}}}}]
)FX";

// tests/e2e/fixtures/qwen/http429.txt
constexpr std::string_view kQwenHttp429 = R"FX([{"type":"system","subtype":"init","session_id":"da9dfab6-0b44-4ff4-b152-7af4c33d69db","cwd":"/tmp/e2e/home.nxFj","model":"qwen3-coder-plus","permission_mode":"default","qwen_code_version":"0.15.10"},{"type":"assistant","uuid":"f3556552-581d-4757-8a8f-208cfcffe874","session_id":"da9dfab6-0b44-4ff4-b152-7af4c33d69db","parent_tool_use_id":null,"message":{"id":"f3556552-581d-4757-8a8f-208cfcffe874","type":"message","role":"assistant","model":"qwen3-coder-plus","content":[{"type":"text","text":"[API Error: 429 Rate limit exceeded: too many requests, please retry later]\nPossible quota limitations in place or slow response times detected. Please wait and try again later."}],"stop_reason":null,"usage":{"input_tokens":0,"output_tokens":0}}},{"type":"result","subtype":"success","uuid":"c0bd7019-0d14-41ca-b194-ed681b6b194d","session_id":"da9dfab6-0b44-4ff4-b152-7af4c33d69db","is_error":false,"duration_ms":84692,"duration_api_ms":84496,"num_turns":1,"result":"[API Error: 429 Rate limit exceeded: too many requests, please retry later]\nPossible quota limitations in place or slow response times detected. Please wait and try again later.","usage":{"input_tokens":0,"output_tokens":0,"cache_read_input_tokens":0},"permission_denials":[],"stats":{"models":{"qwen3-coder-plus":{"api":{"totalRequests":7,"totalErrors":7,"totalLatencyMs":136},"tokens":{"prompt":0,"candidates":0,"total":0,"cached":0,"thoughts":0}}}}}]
)FX";

// tests/e2e/fixtures/qwen/http401.txt
constexpr std::string_view kQwenHttp401 = R"FX([{"type":"system","subtype":"init","session_id":"e786b879-ce0d-4ca6-97d4-06cd1fd02348","cwd":"/tmp/e2e/home.kXEN","model":"qwen3-coder-plus","permission_mode":"default","qwen_code_version":"0.15.10"},{"type":"assistant","uuid":"4aef4780-6e2a-4b82-81fc-3944327deb12","session_id":"e786b879-ce0d-4ca6-97d4-06cd1fd02348","parent_tool_use_id":null,"message":{"id":"4aef4780-6e2a-4b82-81fc-3944327deb12","type":"message","role":"assistant","model":"qwen3-coder-plus","content":[{"type":"text","text":"[API Error: 401 Incorrect API key provided: mock-bad-key.]"}],"stop_reason":null,"usage":{"input_tokens":0,"output_tokens":0}}},{"type":"result","subtype":"success","uuid":"05b0f414-da32-4c4d-94b7-7bafe4a1155b","session_id":"e786b879-ce0d-4ca6-97d4-06cd1fd02348","is_error":false,"duration_ms":342,"duration_api_ms":90,"num_turns":1,"result":"[API Error: 401 Incorrect API key provided: mock-bad-key.]","usage":{"input_tokens":0,"output_tokens":0,"cache_read_input_tokens":0},"permission_denials":[],"stats":{"models":{"qwen3-coder-plus":{"api":{"totalRequests":1,"totalErrors":1,"totalLatencyMs":45},"tokens":{"prompt":0,"candidates":0,"total":0,"cached":0,"thoughts":0}}}}}]
)FX";

// tests/e2e/fixtures/qwen/refused.txt
constexpr std::string_view kQwenRefused = R"FX([{"type":"system","subtype":"init","session_id":"c1d85dc2-1cdc-43be-935a-0f0d88bf59ed","cwd":"/tmp/e2e/home.nxFj","model":"qwen3-coder-plus","permission_mode":"default","qwen_code_version":"0.15.10"},{"type":"assistant","uuid":"5901b66f-c37f-4248-9eb2-c93b57d2f0f9","session_id":"c1d85dc2-1cdc-43be-935a-0f0d88bf59ed","parent_tool_use_id":null,"message":{"id":"5901b66f-c37f-4248-9eb2-c93b57d2f0f9","type":"message","role":"assistant","model":"qwen3-coder-plus","content":[{"type":"text","text":"[API Error: Connection error. (cause: fetch failed)]"}],"stop_reason":null,"usage":{"input_tokens":0,"output_tokens":0}}},{"type":"result","subtype":"success","uuid":"af0bd83e-1e4f-4602-84f9-0b2968b03998","session_id":"c1d85dc2-1cdc-43be-935a-0f0d88bf59ed","is_error":false,"duration_ms":174,"duration_api_ms":44,"num_turns":1,"result":"[API Error: Connection error. (cause: fetch failed)]","usage":{"input_tokens":0,"output_tokens":0,"cache_read_input_tokens":0},"permission_denials":[],"stats":{"models":{"qwen3-coder-plus":{"api":{"totalRequests":1,"totalErrors":1,"totalLatencyMs":13},"tokens":{"prompt":0,"candidates":0,"total":0,"cached":0,"thoughts":0}}}}}]
)FX";

// tests/e2e/fixtures/qwen/tool.txt
constexpr std::string_view kQwenTool = R"FX([{"type":"system","subtype":"init","session_id":"e57df6c6-9d03-41cf-91cb-b9d660d4eb30","cwd":"/tmp/e2e/home.kXEN","model":"qwen3-coder-plus","permission_mode":"yolo","qwen_code_version":"0.15.10"},{"type":"assistant","uuid":"359d0c6c-5c76-468d-80c8-ac20820fac13","session_id":"e57df6c6-9d03-41cf-91cb-b9d660d4eb30","parent_tool_use_id":null,"message":{"id":"359d0c6c-5c76-468d-80c8-ac20820fac13","type":"message","role":"assistant","model":"qwen3-coder-plus","content":[{"type":"tool_use","id":"call_mx21wneg2","name":"run_shell_command","input":{"command":"echo hello-from-tool > /tmp/e2e/home.kXEN/touched.txt; echo TOOL_RAN","description":"Run the command requested by the brief"}}],"stop_reason":"tool_use","usage":{"input_tokens":1200,"output_tokens":150,"cache_read_input_tokens":300,"total_tokens":1350}}},{"type":"user","uuid":"f6a2a9d6-9ad4-4dd5-a36f-a34f79b1e14e","session_id":"e57df6c6-9d03-41cf-91cb-b9d660d4eb30","parent_tool_use_id":null,"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"call_mx21wneg2","is_error":false,"content":"TOOL_RAN"}]}},{"type":"assistant","uuid":"f3bb72b9-b7b8-4cd4-b9e7-834cd1c7d5fe","session_id":"e57df6c6-9d03-41cf-91cb-b9d660d4eb30","parent_tool_use_id":null,"message":{"id":"f3bb72b9-b7b8-4cd4-b9e7-834cd1c7d5fe","type":"message","role":"assistant","model":"qwen3-coder-plus","content":[{"type":"text","text":"SUMMARY: Mock worker completed the task as briefed.\nEVIDENCE: scripted reply from the Conclave mock provider; tool output: Command: echo hello-from-tool > /tmp/e2e/home.kXEN/touched.txt; echo TOOL_RAN Directory: (root) Output: TOOL_RAN Error: (none) Exit Code: 0 Signal: 0 Process Group PGID: 9502.\nCHANGES: none\nRISKS: none\nBLOCKERS: none"}],"stop_reason":null,"usage":{"input_tokens":1200,"output_tokens":150,"cache_read_input_tokens":300,"total_tokens":1350}}},{"type":"result","subtype":"success","uuid":"c96a586d-b973-4319-a1ff-d41f4645e60f","session_id":"e57df6c6-9d03-41cf-91cb-b9d660d4eb30","is_error":false,"duration_ms":5034,"duration_api_ms":276,"num_turns":2,"result":"SUMMARY: Mock worker completed the task as briefed.\nEVIDENCE: scripted reply from the Conclave mock provider; tool output: Command: echo hello-from-tool > /tmp/e2e/home.kXEN/touched.txt; echo TOOL_RAN Directory: (root) Output: TOOL_RAN Error: (none) Exit Code: 0 Signal: 0 Process Group PGID: 9502.\nCHANGES: none\nRISKS: none\nBLOCKERS: none","usage":{"input_tokens":2400,"output_tokens":300,"cache_read_input_tokens":600,"total_tokens":2700},"permission_denials":[],"stats":{"models":{"qwen3-coder-plus":{"api":{"totalRequests":2,"totalErrors":0,"totalLatencyMs":107},"tokens":{"prompt":2400,"candidates":300,"total":2700,"cached":600,"thoughts":0}}}}}]
)FX";

// tests/e2e/fixtures/opencode/success.txt
constexpr std::string_view kOpencodeSuccess = R"FX({"type":"step_start","timestamp":1795969775187,"sessionID":"ses_dd7dc1638ffeARjdKQxhLVloGG","part":{"id":"prt_22823f615001OOiw1gI5PzTCuW","messageID":"msg_22823f0ad0019QW0AxV5AHxbb6","sessionID":"ses_dd7dc1638ffeARjdKQxhLVloGG","type":"step-start"}}
{"type":"text","timestamp":1795969775188,"sessionID":"ses_dd7dc1638ffeARjdKQxhLVloGG","part":{"id":"prt_22823f61d001g5cqRj02AWiZbj","messageID":"msg_22823f0ad0019QW0AxV5AHxbb6","sessionID":"ses_dd7dc1638ffeARjdKQxhLVloGG","type":"text","text":"SUMMARY: Mock worker completed the task as briefed.\nEVIDENCE: scripted reply from the Conclave mock provider.\nCHANGES: none\nRISKS: none\nBLOCKERS: none","time":{"start":1795969775133,"end":1795969775142}}}
{"type":"step_finish","timestamp":1795969775188,"sessionID":"ses_dd7dc1638ffeARjdKQxhLVloGG","part":{"id":"prt_22823f63100175099msbt97imu","reason":"stop","messageID":"msg_22823f0ad0019QW0AxV5AHxbb6","sessionID":"ses_dd7dc1638ffeARjdKQxhLVloGG","type":"step-finish","tokens":{"total":1350,"input":900,"output":150,"reasoning":0,"cache":{"write":0,"read":300}},"cost":0}}
)FX";

// tests/e2e/fixtures/opencode/http500.txt
constexpr std::string_view kOpencodeHttp500 = R"FX({"type":"error","timestamp":1795969855952,"sessionID":"ses_dd7dbf3a3ffevxgpgcd30qE32l","error":{"name":"APIError","data":{"message":"Internal server error","statusCode":500,"isRetryable":true,"responseHeaders":{"connection":"keep-alive","content-length":"92","content-type":"application/json","date":"Sun, 29 Nov 2026 16:30:55 GMT","keep-alive":"timeout=5"},"responseBody":"{\"error\":{\"message\":\"Internal server error\",\"type\":\"server_error\",\"param\":null,\"code\":null}}","metadata":{"url":"http://127.0.0.1:40415/v1/chat/completions"}}}}
)FX";

// tests/e2e/fixtures/opencode/http429.txt
constexpr std::string_view kOpencodeHttp429 = R"FX({"type":"error","timestamp":1795969897009,"sessionID":"ses_dd7dac291ffemgikP9O042MPaQ","error":{"name":"APIError","data":{"message":"Rate limit exceeded: too many requests, please retry later","statusCode":429,"isRetryable":true,"responseHeaders":{"connection":"keep-alive","content-length":"153","content-type":"application/json","date":"Sun, 29 Nov 2026 16:31:36 GMT","keep-alive":"timeout=5","retry-after":"7"},"responseBody":"{\"error\":{\"message\":\"Rate limit exceeded: too many requests, please retry later\",\"type\":\"rate_limit_exceeded\",\"param\":null,\"code\":\"rate_limit_exceeded\"}}","metadata":{"url":"http://127.0.0.1:40415/v1/chat/completions"}}}}
)FX";

// tests/e2e/fixtures/opencode/http401.txt
constexpr std::string_view kOpencodeHttp401 = R"FX({"type":"error","timestamp":1795969903982,"sessionID":"ses_dd7da2013ffel4ZT2Ncypr3SM2","error":{"name":"APIError","data":{"message":"Incorrect API key provided: mock-bad-key.","statusCode":401,"isRetryable":false,"responseHeaders":{"connection":"keep-alive","content-length":"134","content-type":"application/json","date":"Sun, 29 Nov 2026 16:31:43 GMT","keep-alive":"timeout=5"},"responseBody":"{\"error\":{\"message\":\"Incorrect API key provided: mock-bad-key.\",\"type\":\"invalid_request_error\",\"param\":null,\"code\":\"invalid_api_key\"}}","metadata":{"url":"http://127.0.0.1:40415/v1/chat/completions"}}}}
)FX";

// tests/e2e/fixtures/opencode/tool.txt
constexpr std::string_view kOpencodeTool = R"FX({"type":"step_start","timestamp":1795969948083,"sessionID":"ses_dd7d975b3ffebccG327Umhgnqc","part":{"id":"prt_228269980001RQDGGz4tADiAYD","messageID":"msg_228269174001uzRLMaKPcIITH2","sessionID":"ses_dd7d975b3ffebccG327Umhgnqc","type":"step-start"}}
{"type":"tool_use","timestamp":1795969948525,"sessionID":"ses_dd7d975b3ffebccG327Umhgnqc","part":{"type":"tool","tool":"bash","callID":"call_mx224wv63","state":{"status":"completed","input":{"command":"echo hello-from-tool > /tmp/e2e/home.rcJZ/touched.txt; echo TOOL_RAN"},"output":"TOOL_RAN\n","metadata":{"output":"TOOL_RAN\n","exit":0,"truncated":false},"title":"echo hello-from-tool > /tmp/e2e/home.rcJZ/touched.txt; echo TOOL_RAN","time":{"start":1795969948062,"end":1795969948312}},"id":"prt_22826998d001pBOeM2EsCIlBkX","sessionID":"ses_dd7d975b3ffebccG327Umhgnqc","messageID":"msg_228269174001uzRLMaKPcIITH2"}}
{"type":"step_finish","timestamp":1795969948525,"sessionID":"ses_dd7d975b3ffebccG327Umhgnqc","part":{"id":"prt_228269aa0001xEbQChuO6AT2CB","reason":"tool-calls","messageID":"msg_228269174001uzRLMaKPcIITH2","sessionID":"ses_dd7d975b3ffebccG327Umhgnqc","type":"step-finish","tokens":{"total":1350,"input":900,"output":150,"reasoning":0,"cache":{"write":0,"read":300}},"cost":0}}
{"type":"step_start","timestamp":1795969948526,"sessionID":"ses_dd7d975b3ffebccG327Umhgnqc","part":{"id":"prt_228269b2c001Dn6b2LRx1OkzXl","messageID":"msg_228269ad2001TyDL7G7VTbqghT","sessionID":"ses_dd7d975b3ffebccG327Umhgnqc","type":"step-start"}}
{"type":"text","timestamp":1795969948526,"sessionID":"ses_dd7d975b3ffebccG327Umhgnqc","part":{"id":"prt_228269b32001AVfUuTbXP64I41","messageID":"msg_228269ad2001TyDL7G7VTbqghT","sessionID":"ses_dd7d975b3ffebccG327Umhgnqc","type":"text","text":"SUMMARY: Mock worker completed the task as briefed.\nEVIDENCE: scripted reply from the Conclave mock provider; tool output: TOOL_RAN.\nCHANGES: none\nRISKS: none\nBLOCKERS: none","time":{"start":1795969948466,"end":1795969948481}}}
{"type":"step_finish","timestamp":1795969948526,"sessionID":"ses_dd7d975b3ffebccG327Umhgnqc","part":{"id":"prt_228269b4a001G1kAaNhanC3TGy","reason":"stop","messageID":"msg_228269ad2001TyDL7G7VTbqghT","sessionID":"ses_dd7d975b3ffebccG327Umhgnqc","type":"step-finish","tokens":{"total":1350,"input":900,"output":150,"reasoning":0,"cache":{"write":0,"read":300}},"cost":0}}
)FX";

// tests/e2e/fixtures/gemini/success.txt
constexpr std::string_view kGeminiSuccess = R"FX({
  "session_id": "2de38340-dceb-4b0f-8fbf-effd9bd642d0",
  "response": "SUMMARY: Mock worker completed the task as briefed.\nEVIDENCE: scripted reply from the Conclave mock provider.\nCHANGES: none\nRISKS: none\nBLOCKERS: none",
  "stats": {
    "models": {
      "gemini-2.5-pro": {
        "api": {
          "totalRequests": 1,
          "totalErrors": 0,
          "totalLatencyMs": 198,
          "errorsByType": {}
        },
        "tokens": {
          "input": 900,
          "prompt": 1200,
          "candidates": 150,
          "total": 1350,
          "cached": 300,
          "thoughts": 0,
          "tool": 0
        }
      }
    }
  }
}
)FX";

// tests/e2e/fixtures/gemini/tool.txt
constexpr std::string_view kGeminiTool = R"FX({
  "session_id": "a3496d64-5831-42b5-9d7c-0b402ffc1c23",
  "response": "SUMMARY: Mock worker completed the task as briefed.\nEVIDENCE: scripted reply from the Conclave mock provider; tool output: {\"output\":\"<untrusted_context>\\nOutput: TOOL_RAN\\nProcess Group PGID: 1859\\n</untrusted_context>\"}.\nCHANGES: none\nRISKS: none\nBLOCKERS: none",
  "stats": {
    "models": {
      "gemini-2.5-pro": {
        "api": {
          "totalRequests": 2,
          "totalErrors": 0,
          "totalLatencyMs": 164,
          "errorsByType": {}
        },
        "tokens": {
          "input": 1800,
          "prompt": 2400,
          "candidates": 300,
          "total": 2700,
          "cached": 600,
          "thoughts": 0,
          "tool": 0
        }
      }
    }
  }
}
)FX";

// tests/e2e/fixtures/gemini/http500.stderr.txt
constexpr std::string_view kGeminiHttp500Stderr = R"FX(Error when talking to Gemini API Full report available at: /tmp/e2e/home.Ffe0/gemini-client-error-Turn.run-sendMessageStream-2026-11-29T16-40-14-448Z.json _ApiError: {"error":{"code":500,"message":"Internal server error","status":"INTERNAL"}}
  status: 500
}
{
  "session_id": "579a6d78-461b-4d99-8c3a-7881287ad963",
  "error": {
    "type": "Error",
    "message": "{\"error\":{\"code\":500,\"message\":\"Internal server error\",\"status\":\"INTERNAL\"}}",
    "code": 500
  }
}
)FX";

// tests/e2e/fixtures/gemini/http429.stderr.txt
constexpr std::string_view kGeminiHttp429Stderr = R"FX(Error when talking to Gemini API Full report available at: /tmp/e2e/home.Ffe0/gemini-client-error-Turn.run-sendMessageStream-2026-11-29T16-40-21-403Z.json RetryableQuotaError: Rate limit exceeded: too many requests, please retry later
  cause: {
    code: 429,
    message: 'Rate limit exceeded: too many requests, please retry later',
    details: []
  },
  retryDelayMs: undefined,
  status: 429
}
{
  "session_id": "bbcee8f5-7f51-4f48-82e7-86f9c51a9e90",
  "error": {
    "type": "Error",
    "message": "Rate limit exceeded: too many requests, please retry later",
    "code": 429
  }
}
)FX";

// tests/e2e/fixtures/gemini/http401.stderr.txt
constexpr std::string_view kGeminiHttp401Stderr = R"FX(Error when talking to Gemini API Full report available at: /tmp/e2e/home.YrPH/gemini-client-error-Turn.run-sendMessageStream-2026-11-29T16-39-54-762Z.json _ApiError: {"error":{"code":401,"message":"API key not valid. Please pass a valid API key.","status":"UNAUTHENTICATED"}}
  status: 401
}
{
  "session_id": "81f9245c-9915-42af-8a43-3930d7de1f0a",
  "error": {
    "type": "Error",
    "message": "{\"error\":{\"code\":401,\"message\":\"API key not valid. Please pass a valid API key.\",\"status\":\"UNAUTHENTICATED\"}}",
    "code": 401
  }
}
)FX";

// tests/e2e/fixtures/gemini/refused.stderr.txt
constexpr std::string_view kGeminiRefusedStderr = R"FX(Error when talking to Gemini API Full report available at: /tmp/e2e/home.Ffe0/gemini-client-error-Turn.run-sendMessageStream-2026-11-29T16-40-23-518Z.json Error: exception TypeError: fetch failed sending request
{
  "session_id": "0f95ba9b-03b6-47fa-8afa-f3dc8dcaf5c4",
  "error": {
    "type": "Error",
    "message": "exception TypeError: fetch failed sending request",
    "code": 1
  }
}
)FX";

constexpr std::string_view kContractText =
    "SUMMARY: Mock worker completed the task as briefed.\n"
    "EVIDENCE: scripted reply from the Conclave mock provider.\n"
    "CHANGES: none\nRISKS: none\nBLOCKERS: none";

bool Contains(const std::string& s, std::string_view needle) {
  return s.find(needle) != std::string::npos;
}

}  // namespace

TEST_CASE("parser names", "[output_parser]") {
  for (auto n : {"text", "claude-json", "codex-jsonl", "qwen-json", "opencode-jsonl", "gemini-json"}) {
    CHECK(conclave::exec::IsKnownParser(n));
  }
  CHECK_FALSE(conclave::exec::IsKnownParser("claude"));
  auto p = ParseCliOutput("nope", "x", "", 0);
  CHECK(p.malformed);
  CHECK(p.failure == FailureKind::kContractViolation);
}

TEST_CASE("text parser", "[output_parser]") {
  auto ok = ParseCliOutput("text", kClaudeTextSuccess, "", 0);
  CHECK(ok.failure == FailureKind::kNone);
  CHECK(ok.result_text == kClaudeTextSuccess);
  auto bad = ParseCliOutput("text", "partial\n", "warming up\nfatal: cannot open a.txt\n\n", 2);
  CHECK(bad.failure == FailureKind::kNonZeroExit);
  CHECK(bad.evidence == "exit 2: fatal: cannot open a.txt");
  auto bad2 = ParseCliOutput("text", "line1\nlast words\n", "", 1);
  CHECK(bad2.evidence == "exit 1: last words");
}

TEST_CASE("claude: success with cost and usage", "[output_parser][claude]") {
  auto p = ParseCliOutput("claude-json", kClaudeSuccess, "", 0);
  CHECK(p.failure == FailureKind::kNone);
  CHECK_FALSE(p.malformed);
  CHECK(p.result_text == kContractText);
  REQUIRE(p.reported_cost_usd);
  CHECK(*p.reported_cost_usd == Approx(0.00504));
  CHECK(p.usage.input_tokens == 900);
  CHECK(p.usage.output_tokens == 150);
  CHECK(p.usage.cache_read_tokens == 300);
  CHECK_FALSE(p.structured_output);
}

TEST_CASE("claude: stream-json ends in the same result object", "[output_parser][claude]") {
  auto p = ParseCliOutput("claude-json", kClaudeStreamSuccess, "", 0);
  CHECK(p.failure == FailureKind::kNone);
  CHECK(p.result_text == kContractText);
  CHECK(p.usage.output_tokens == 150);
  auto e = ParseCliOutput("claude-json", kClaudeStreamHttp500, "", 1);
  CHECK(e.failure == FailureKind::kProviderUnavailable);
}

TEST_CASE("claude: DeepSeek profile (claude CLI on another endpoint)", "[output_parser][claude]") {
  auto p = ParseCliOutput("claude-json", kClaudeDeepseek, "", 0);
  CHECK(p.failure == FailureKind::kNone);
  CHECK(p.result_text == kContractText);
  CHECK(p.usage.input_tokens == 900);
}

TEST_CASE("claude: provider errors", "[output_parser][claude]") {
  auto e500 = ParseCliOutput("claude-json", kClaudeHttp500, "", 1);
  CHECK(e500.failure == FailureKind::kProviderUnavailable);
  CHECK(Contains(e500.evidence, "is_error=true"));
  CHECK(Contains(e500.evidence, "api_error_status=500"));

  auto e429 = ParseCliOutput("claude-json", kClaudeHttp429, "", 1);
  CHECK(e429.failure == FailureKind::kRateLimited);
  CHECK(Contains(e429.evidence, "api_error_status=429"));

  auto e401 = ParseCliOutput("claude-json", kClaudeHttp401, "", 1);
  CHECK(e401.failure == FailureKind::kAuthError);

  auto refused = ParseCliOutput("claude-json", kClaudeRefused, "", 1);
  CHECK(refused.failure == FailureKind::kTransportError);
  CHECK(Contains(refused.evidence, "ConnectionRefused"));
}

TEST_CASE("claude: budget cap", "[output_parser][claude]") {
  auto p = ParseCliOutput("claude-json", kClaudeBudget, "", 1);
  CHECK(p.failure == FailureKind::kBudgetExceeded);
  CHECK(Contains(p.evidence, "error_max_budget_usd"));
  CHECK(Contains(p.evidence, "Reached maximum budget"));
  REQUIRE(p.reported_cost_usd);
  CHECK(*p.reported_cost_usd > 0.001);
}

TEST_CASE("claude: --json-schema structured findings", "[output_parser][claude]") {
  auto p = ParseCliOutput("claude-json", kClaudeFindingsSchema, "", 0);
  CHECK(p.failure == FailureKind::kNone);
  REQUIRE(p.structured_output);
  const auto& f = (*p.structured_output)["findings"];
  REQUIRE(f.is_array());
  REQUIRE(f.size() == 1);
  CHECK(f[0]["id"] == "F1");
  CHECK(f[0]["severity"] == "HIGH");
  CHECK(f[0]["location"]["line"] == 3);
  CHECK(Contains(p.result_text, "\"findings\""));
}

TEST_CASE("claude: shell tool run then final contract", "[output_parser][claude]") {
  auto p = ParseCliOutput("claude-json", kClaudeTool, "", 0);
  CHECK(p.failure == FailureKind::kNone);
  CHECK(Contains(p.result_text, "tool output: TOOL_RAN"));
  CHECK(p.usage.output_tokens == 300);
}

TEST_CASE("claude: non-JSON output", "[output_parser][claude]") {
  auto p = ParseCliOutput("claude-json", "", "Error: unknown option '--bogus'\n", 1);
  CHECK(p.malformed);
  CHECK(p.failure == FailureKind::kNonZeroExit);
  CHECK(Contains(p.evidence, "unknown option"));
  auto q = ParseCliOutput("claude-json", "hello", "", 0);
  CHECK(q.malformed);
  CHECK(q.failure == FailureKind::kContractViolation);
}

TEST_CASE("codex: success despite the spurious error item", "[output_parser][codex]") {
  auto p = ParseCliOutput("codex-jsonl", kCodexSuccess, "", 0);
  CHECK(p.failure == FailureKind::kNone);
  CHECK_FALSE(p.malformed);
  CHECK(p.result_text == kContractText);
  CHECK(p.usage.input_tokens == 900);
  CHECK(p.usage.cache_read_tokens == 300);
  CHECK(p.usage.output_tokens == 150);
  CHECK_FALSE(p.reported_cost_usd);
}

TEST_CASE("codex: tool run", "[output_parser][codex]") {
  auto p = ParseCliOutput("codex-jsonl", kCodexTool, "", 0);
  CHECK(p.failure == FailureKind::kNone);
  CHECK(Contains(p.result_text, "TOOL_RAN"));
  CHECK(p.usage.output_tokens == 300);
}

TEST_CASE("codex: provider errors", "[output_parser][codex]") {
  auto e500 = ParseCliOutput("codex-jsonl", kCodexHttp500, "", 1);
  CHECK(e500.failure == FailureKind::kProviderUnavailable);
  CHECK(Contains(e500.evidence, "turn.failed"));
  auto e429 = ParseCliOutput("codex-jsonl", kCodexHttp429, "", 1);
  CHECK(e429.failure == FailureKind::kRateLimited);
  auto e401 = ParseCliOutput("codex-jsonl", kCodexHttp401, "", 1);
  CHECK(e401.failure == FailureKind::kAuthError);
  // Killed by the daemon while reconnecting forever.
  auto refused = ParseCliOutput("codex-jsonl", kCodexRefused, "", -1);
  CHECK(refused.failure == FailureKind::kTransportError);
}

TEST_CASE("qwen: success", "[output_parser][qwen]") {
  auto p = ParseCliOutput("qwen-json", kQwenSuccess, "", 0);
  CHECK(p.failure == FailureKind::kNone);
  CHECK(p.result_text == kContractText);
  CHECK(p.usage.input_tokens == 1800);
  CHECK(p.usage.cache_read_tokens == 600);
  CHECK(p.usage.output_tokens == 300);
  auto t = ParseCliOutput("qwen-json", kQwenTool, "", 0);
  CHECK(t.failure == FailureKind::kNone);
  CHECK(Contains(t.result_text, "TOOL_RAN"));
}

TEST_CASE("qwen: an API Error result with exit 0 and is_error:false is a failure", "[output_parser][qwen]") {
  auto e500 = ParseCliOutput("qwen-json", kQwenHttp500, "", 0);
  CHECK(e500.failure == FailureKind::kProviderUnavailable);
  CHECK(Contains(e500.evidence, "is_error=false"));
  CHECK(Contains(e500.evidence, "[API Error: 500"));
  auto e429 = ParseCliOutput("qwen-json", kQwenHttp429, "", 0);
  CHECK(e429.failure == FailureKind::kRateLimited);
  auto e401 = ParseCliOutput("qwen-json", kQwenHttp401, "", 0);
  CHECK(e401.failure == FailureKind::kAuthError);
  auto refused = ParseCliOutput("qwen-json", kQwenRefused, "", 0);
  CHECK(refused.failure == FailureKind::kTransportError);
}

TEST_CASE("opencode: success, usage summed over steps", "[output_parser][opencode]") {
  auto p = ParseCliOutput("opencode-jsonl", kOpencodeSuccess, "", 0);
  CHECK(p.failure == FailureKind::kNone);
  CHECK(p.result_text == kContractText);
  CHECK(p.usage.input_tokens == 900);
  CHECK(p.usage.cache_read_tokens == 300);
  auto t = ParseCliOutput("opencode-jsonl", kOpencodeTool, "", 0);
  CHECK(t.failure == FailureKind::kNone);
  CHECK(Contains(t.result_text, "SUMMARY:"));
  CHECK(t.usage.output_tokens == 300);
}

TEST_CASE("opencode: error events", "[output_parser][opencode]") {
  auto e500 = ParseCliOutput("opencode-jsonl", kOpencodeHttp500, "", 1);
  CHECK(e500.failure == FailureKind::kProviderUnavailable);
  CHECK(Contains(e500.evidence, "statusCode=500"));
  auto e429 = ParseCliOutput("opencode-jsonl", kOpencodeHttp429, "", 1);
  CHECK(e429.failure == FailureKind::kRateLimited);
  REQUIRE(e429.retry_after_s);
  CHECK(*e429.retry_after_s == 7);
  auto e401 = ParseCliOutput("opencode-jsonl", kOpencodeHttp401, "", 1);
  CHECK(e401.failure == FailureKind::kAuthError);
}

TEST_CASE("gemini: success", "[output_parser][gemini]") {
  auto p = ParseCliOutput("gemini-json", kGeminiSuccess, "Ripgrep is not available.\n", 0);
  CHECK(p.failure == FailureKind::kNone);
  CHECK(p.result_text == kContractText);
  CHECK(p.usage.input_tokens == 900);
  CHECK(p.usage.cache_read_tokens == 300);
  CHECK(p.usage.output_tokens == 150);
  auto t = ParseCliOutput("gemini-json", kGeminiTool, "", 0);
  CHECK(t.failure == FailureKind::kNone);
  CHECK(Contains(t.result_text, "TOOL_RAN"));
}

TEST_CASE("gemini: error object on stderr, exit = code mod 256", "[output_parser][gemini]") {
  auto e401 = ParseCliOutput("gemini-json", "", kGeminiHttp401Stderr, 145);
  CHECK(e401.failure == FailureKind::kAuthError);
  CHECK(Contains(e401.evidence, "exit=145"));
  auto e429 = ParseCliOutput("gemini-json", "", kGeminiHttp429Stderr, 173);
  CHECK(e429.failure == FailureKind::kRateLimited);
  auto e500 = ParseCliOutput("gemini-json", "", kGeminiHttp500Stderr, 244);
  CHECK(e500.failure == FailureKind::kProviderUnavailable);
  auto refused = ParseCliOutput("gemini-json", "", kGeminiRefusedStderr, 1);
  CHECK(refused.failure == FailureKind::kTransportError);
  // Exit 145 alone (stderr cut off) still means an authentication failure.
  auto bare = ParseCliOutput("gemini-json", "", "", 145);
  CHECK(bare.failure == FailureKind::kAuthError);
}

TEST_CASE("helpers", "[output_parser]") {
  using namespace conclave::exec::parser_detail;
  CHECK(FindHttpStatus("API Error: Request rejected (429) · Rate limit") == 429);
  CHECK(FindHttpStatus("exceeded retry limit, last status: 429 Too Many Requests") == 429);
  CHECK(FindHttpStatus("unexpected status 401 Unauthorized: bad key") == 401);
  CHECK(FindHttpStatus("Process exited with code 0") == std::nullopt);
  CHECK(FindRetryAfter("retry-after: 7") == 7);
  CHECK(FindRetryAfter("retryDelayMs: 2500") == 3);
  CHECK(FindRetryAfter("nothing here") == std::nullopt);
  CHECK(ClassifyError("We're currently experiencing high demand", std::nullopt) ==
        FailureKind::kProviderUnavailable);
  CHECK(ClassifyError("Overloaded", 529) == FailureKind::kProviderUnavailable);
  CHECK(ClassifyError("anything", 403) == FailureKind::kAuthError);
  CHECK(ClassifyError("the tests failed", std::nullopt) == FailureKind::kNone);
  CHECK(LastNonEmptyLine("a\nb  \n\n  \n") == "b");
  CHECK(Clip(std::string(400, 'x'), 10) == "xxxxxxxxxx...");
}
