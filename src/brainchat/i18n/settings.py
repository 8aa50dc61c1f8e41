"""The settings panel: its sections, labels, choices and the notices of a save."""

TEXT = {
    "settings.tab.models": ("Models", "模型", "模型"),
    "settings.tab.agent": ("Agent", "智能体", "智能體"),
    "settings.tab.advanced": ("Advanced", "高级", "進階"),
    "settings.tab.interface": ("Interface", "界面", "介面"),
    "settings.language_help": (
        "The language of brainchat's own text (messages, buttons, step titles, this panel); "
        "it applies from your next message. Auto follows the browser's language.",
        "brainchat 自身文字（消息、按钮、步骤标题、本面板）的语言，从你的下一条消息起生效。"
        "“自动”跟随浏览器语言。",
        "brainchat 自身文字（訊息、按鈕、步驟標題、本面板）的語言，從你的下一則訊息起生效。"
        "「自動」跟隨瀏覽器語言。",
    ),
    "settings.role.function_call": (
        "Function-call model (thinks, calls tools)",
        "函数调用模型（思考、调用工具）",
        "函式呼叫模型（思考、呼叫工具）",
    ),
    "settings.role.answer": (
        "Answer model (writes the final answer)",
        "回答模型（撰写最终回答）",
        "回答模型（撰寫最終回答）",
    ),
    "settings.role.chat": ("Chat-mode model", "聊天模式模型", "聊天模式模型"),
    "settings.name.function_call": ("Function-call", "函数调用", "函式呼叫"),
    "settings.name.answer": ("Answer", "回答", "回答"),
    "settings.name.chat": ("Chat", "聊天", "聊天"),
    "settings.models_help": (
        'A connection\'s models are listed as "model @ name". To connect another server, use '
        "Add a model connection (the button on the first message, or type /connect).",
        "连接的模型以“模型 @ 名称”列出。要连接另一个服务器，请使用“添加模型连接”"
        "（第一条消息上的按钮，或输入 /connect）。",
        "連線的模型以「模型 @ 名稱」列出。要連線另一個伺服器，請使用「新增模型連線」"
        "（第一則訊息上的按鈕，或輸入 /connect）。",
    ),
    "settings.none": ("(none configured)", "（未配置）", "（未設定）"),
    "settings.remove": (
        "Remove a connection (asks first; its saved key is deleted)",
        "删除一个连接（先询问；其保存的密钥会被删除）",
        "刪除一個連線（先詢問；其儲存的金鑰會被刪除）",
    ),
    "settings.keep_all": ("(keep them all)", "（全部保留）", "（全部保留）"),
    "settings.your_connections": (
        "Your connections: {have}.",
        "你的连接：{have}。",
        "你的連線：{have}。",
    ),
    "settings.connection_models": ("{count} models", "{count} 个模型", "{count} 個模型"),
    "settings.field.max_iterations": ("Max iterations", "最大迭代次数", "最大迭代次數"),
    "settings.field.max_execution_time": ("Max execution time", "最长执行时间", "最長執行時間"),
    "settings.field.execution_mode": ("Execution mode", "执行模式", "執行模式"),
    "settings.unit.seconds": ("seconds", "秒", "秒"),
    "settings.range": ("{name} ({range})", "{name}（{range}）", "{name}（{range}）"),
    "settings.range_unit": (
        "{name}, {unit} ({range})",
        "{name}（{unit}，{range}）",
        "{name}（{unit}，{range}）",
    ),
    "settings.plan_label": (
        "Plan multi-step requests (verified steps, at most {replans} replans)",
        "规划多步请求（逐步核对，最多重新规划 {replans} 次）",
        "規劃多步請求（逐步核對，最多重新規劃 {replans} 次）",
    ),
    "settings.exec.auto": (
        "Auto (several rounds of tools)",
        "自动（多轮工具调用）",
        "自動（多輪工具呼叫）",
    ),
    "settings.exec.single_step": (
        "Single step (one round of tools)",
        "单步（一轮工具调用）",
        "單步（一輪工具呼叫）",
    ),
    "settings.plan.off": ("Off", "关闭", "關閉"),
    "settings.plan.auto": ("Auto (the model decides)", "自动（由模型决定）", "自動（由模型決定）"),
    "settings.plan.always": ("Always", "总是", "總是"),
    "settings.calling.native": (
        "Native (the server's tool calls)",
        "原生（服务器的工具调用）",
        "原生（伺服器的工具呼叫）",
    ),
    "settings.calling.prompt": (
        "Prompt (tools in the system prompt, calls as JSON in the text)",
        "提示词（工具写在系统提示中，调用以 JSON 写在文本里）",
        "提示詞（工具寫在系統提示中，呼叫以 JSON 寫在文字裡）",
    ),
    "settings.calling.auto": (
        "Auto (native, and JSON calls in the text)",
        "自动（原生，以及文本中的 JSON 调用）",
        "自動（原生，以及文字中的 JSON 呼叫）",
    ),
    "settings.guidance.auto": (
        "Auto (guided when it calls tools through the prompt)",
        "自动（通过提示词调用工具时引导）",
        "自動（透過提示詞呼叫工具時引導）",
    ),
    "settings.guidance.minimal": (
        "Minimal (limits, approvals and the answer check only)",
        "最少（仅限制、审批和回答检查）",
        "最少（僅限制、審批和回答檢查）",
    ),
    "settings.guidance.guided": (
        "Guided (a record of the request, the next step, checks of its calls)",
        "引导（请求记录、下一步、核对其调用）",
        "引導（請求記錄、下一步、核對其呼叫）",
    ),
    "settings.streamed.true": ("Streamed", "流式", "串流"),
    "settings.streamed.false": (
        "Not streamed (servers that cannot stream tool calls)",
        "非流式（无法流式传输工具调用的服务器）",
        "非串流（無法串流傳輸工具呼叫的伺服器）",
    ),
    "settings.custom_label": (
        "{name} model: another id on the same provider",
        "{name}模型：同一提供方的其他模型 ID",
        "{name}模型：同一提供者的其他模型 ID",
    ),
    "settings.custom_placeholder": (
        "e.g. gpt-4o or deepseek-chat (wins over the pick in Models)",
        "例如 gpt-4o 或 deepseek-chat（优先于“模型”中的选择）",
        "例如 gpt-4o 或 deepseek-chat（優先於「模型」中的選擇）",
    ),
    "settings.temperature_label": (
        "{name} temperature ({range}, empty = model default)",
        "{name}温度（{range}，留空 = 模型默认值）",
        "{name}溫度（{range}，留空 = 模型預設值）",
    ),
    "settings.model_default": ("model default", "模型默认值", "模型預設值"),
    "settings.tool_calling": (
        "Function-call model: tool calling",
        "函数调用模型：工具调用方式",
        "函式呼叫模型：工具呼叫方式",
    ),
    "settings.guidance": (
        "Function-call model: guidance",
        "函数调用模型：引导",
        "函式呼叫模型：引導",
    ),
    "settings.stream_calls": (
        "Function-call model: stream the tool-call request",
        "函数调用模型：流式传输工具调用请求",
        "函式呼叫模型：串流傳輸工具呼叫請求",
    ),
    "settings.not_applied.one": (
        "⚠️ **Settings not applied:** {count} value is not allowed.\n{listed}\n\n"
        "The previous settings stay in force: {summary}.",
        "⚠️ **设置未应用**：{count} 个值不被允许。\n{listed}\n\n之前的设置仍然有效：{summary}。",
        "⚠️ **設定未套用**：{count} 個值不被允許。\n{listed}\n\n之前的設定仍然有效：{summary}。",
    ),
    "settings.not_applied.many": (
        "⚠️ **Settings not applied:** {count} values are not allowed.\n{listed}\n\n"
        "The previous settings stay in force: {summary}.",
        "⚠️ **设置未应用**：{count} 个值不被允许。\n{listed}\n\n之前的设置仍然有效：{summary}。",
        "⚠️ **設定未套用**：{count} 個值不被允許。\n{listed}\n\n之前的設定仍然有效：{summary}。",
    ),
    "settings.saved": (
        "✅ **Settings saved.** They apply from your next message: {summary}.",
        "✅ **设置已保存**。从你的下一条消息起生效：{summary}。",
        "✅ **設定已儲存**。從你的下一則訊息起生效：{summary}。",
    ),
    "settings.summary.model": (
        "{role}: `{name}` (temperature {temp}{calling})",
        "{role}：`{name}`（温度 {temp}{calling}）",
        "{role}：`{name}`（溫度 {temp}{calling}）",
    ),
    "settings.summary.default": ("default", "默认", "預設"),
    "settings.summary.calling": (
        ", tool calling {how}{streamed}, guidance {guidance}",
        "，工具调用 {how}{streamed}，引导 {guidance}",
        "，工具呼叫 {how}{streamed}，引導 {guidance}",
    ),
    "settings.summary.not_streamed": (", not streamed", "，非流式", "，非串流"),
    "settings.summary.limits": (
        "max iterations {iterations}, max time {time} s, execution mode {mode}, plan {plan}",
        "最大迭代 {iterations} 次，最长 {time} 秒，执行模式 {mode}，规划 {plan}",
        "最大迭代 {iterations} 次，最長 {time} 秒，執行模式 {mode}，規劃 {plan}",
    ),
    "settings.summary.role.function_call": ("function-call", "函数调用", "函式呼叫"),
    "settings.summary.role.answer": ("answer", "回答", "回答"),
    "settings.summary.role.chat": ("chat", "聊天", "聊天"),
    "settings.allowed.bool": ("expected true or false", "应为 true 或 false", "應為 true 或 false"),
    "settings.allowed.choices": (
        "allowed: {choices}",
        "允许的值：{choices}",
        "允許的值：{choices}",
    ),
    "settings.allowed.whole": (
        "expected a whole number from {lo} to {hi}",
        "应为 {lo} 到 {hi} 之间的整数",
        "應為 {lo} 到 {hi} 之間的整數",
    ),
    "settings.allowed.number": (
        "expected a number from {lo} to {hi}",
        "应为 {lo} 到 {hi} 之间的数字",
        "應為 {lo} 到 {hi} 之間的數字",
    ),
    "settings.allowed.range": (
        "allowed range is {lo} to {hi}",
        "允许范围为 {lo} 到 {hi}",
        "允許範圍為 {lo} 到 {hi}",
    ),
    "settings.bad_value": (
        "{name}: {value} is not valid; {allowed}",
        "“{name}”：{value} 无效；{allowed}",
        "「{name}」：{value} 無效；{allowed}",
    ),
    "settings.field.plan_mode": ("Plan mode", "规划模式", "規劃模式"),
    "settings.temperature_name": ("{name} temperature", "{name}温度", "{name}溫度"),
    "settings.model_name": ("{name} model", "{name}模型", "{name}模型"),
}
