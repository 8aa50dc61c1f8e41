"""The offline demo's own sentences (`brainchat --demo`, `brainchat ask --demo`)."""

TEXT = {
    "demo.welcome": (
        "🎬 **Demo mode**: scripted models answer (offline, no key, no cost) and web search reads "
        "a fixture file. The scripted models answer by what you ask, in any conversation and as "
        "often as you like, in English or Chinese: in **Chat** ask about EEG; switch to **Agent** "
        "and ask about motor imagery (it searches and cites its sources); write the demo EEG set "
        "and ask *what is in the demo files* (it lists and loads them) or ask it to *train a "
        "decoder* (it loads, filters, epochs, trains EEGNet, evaluates it and states the results, "
        "with the figures). Then follow up: *why is the accuracy so high?*, *train CSP+LDA and "
        "compare*, *plot the PSD*.",
        "🎬 **演示模式**：由脚本模型回答（离线、无需密钥、不花钱），网页搜索读取一个固定的资料文件。"
        "脚本模型按你问的内容回答，任何对话、问多少次都一样，中英文皆可：在 **Chat** 模式问 EEG 的问题；"
        "切换到 **Agent** 模式问运动想象（它会检索并引用来源）；写入演示 EEG 数据后问*演示文件里有什么*"
        "（它会列出并加载文件），或让它*训练一个解码器*（加载、滤波、分段、训练 EEGNet、评估并给出结果和图）。"
        "然后接着问：*为什么准确率这么高？*、*训练 CSP+LDA 并比较*、*画出功率谱*。",
        "🎬 **示範模式**：由腳本模型回答（離線、無需金鑰、不花錢），網頁搜尋讀取一個固定的資料檔。"
        "腳本模型按你問的內容回答，任何對話、問多少次都一樣，中英文皆可：在 **Chat** 模式問 EEG 的問題；"
        "切換到 **Agent** 模式問運動想像（它會檢索並引用來源）；寫入示範 EEG 資料後問*示範檔案裡有什麼*"
        "（它會列出並載入檔案），或讓它*訓練一個解碼器*（載入、濾波、分段、訓練 EEGNet、評估並給出結果和圖）。"
        "然後接著問：*為什麼準確率這麼高？*、*訓練 CSP+LDA 並比較*、*畫出功率譜*。",
    ),
    "demo.capabilities": (
        "This is brainchat's offline demo: scripted models, no key, no network. They understand "
        "only what the demo's tour does. In **Agent** mode it can search its fixture of sources "
        "and cite them (ask about motor imagery or ERD), list and describe the demo EEG files "
        "(*what is in the demo files?*), plot their power spectrum (*plot the PSD*), train and "
        "evaluate a decoder on them (*train a decoder*, *train CSP+LDA*, *split by session and "
        "train again*), answer a question about a result without retraining (*why is the "
        "accuracy so high?*) and compare the decoders trained (*compare them*). Point brainchat "
        "at a real model (README, Configuration) to ask anything else.",
        "这是 brainchat 的离线演示：脚本模型，无需密钥，不联网。它只懂演示流程里的这些事。在 **Agent** "
        "模式下，它可以检索内置的资料并引用（问运动想象或 ERD），列出并介绍演示 EEG 文件（*演示文件里有什么？*），"
        "画出它们的功率谱（*画出功率谱*），在上面训练并评估解码器（*训练一个解码器*、*训练 CSP+LDA*、"
        "*按会话划分再训练*），不重新训练就回答关于结果的问题（*为什么准确率这么高？*），并比较已训练的解码器"
        "（*比较它们*）。若要问别的，请让 brainchat 连接真实模型（见 README 的 Configuration）。",
        "這是 brainchat 的離線示範：腳本模型，無需金鑰，不連網。它只懂示範流程裡的這些事。在 **Agent** "
        "模式下，它可以檢索內建的資料並引用（問運動想像或 ERD），列出並介紹示範 EEG 檔案（*示範檔案裡有什麼？*），"
        "畫出它們的功率譜（*畫出功率譜*），在上面訓練並評估解碼器（*訓練一個解碼器*、*訓練 CSP+LDA*、"
        "*按會話劃分再訓練*），不重新訓練就回答關於結果的問題（*為什麼準確率這麼高？*），並比較已訓練的解碼器"
        "（*比較它們*）。若要問別的，請讓 brainchat 連接真實模型（見 README 的 Configuration）。",
    ),
    "demo.chat_needs_tools": (
        "Chat mode has no tools, so it cannot open files or train models. Switch to **Agent** mode "
        "(the mode picker beside the input) and ask again: it lists and loads the demo files, or "
        "trains and evaluates a decoder on them.",
        "Chat 模式没有工具，无法打开文件或训练模型。请切换到 **Agent** 模式（输入框旁的模式选择）再问一次："
        "它会列出并加载演示文件，或在上面训练并评估解码器。",
        "Chat 模式沒有工具，無法開啟檔案或訓練模型。請切換到 **Agent** 模式（輸入框旁的模式選擇）再問一次："
        "它會列出並載入示範檔案，或在上面訓練並評估解碼器。",
    ),
    "demo.compare_which": (
        "Only {trained} has been trained and evaluated in this conversation ({score}), so there "
        "is nothing to compare it with yet. Which decoder should it be compared with? Ask, for "
        "example, *train CSP+LDA and compare* (or EEGNet, ShallowConvNet, SCCNet).",
        "本对话中只训练并评估了 {trained}（{score}），还没有可比较的对象。要和哪个解码器比较？例如可以说"
        "*训练 CSP+LDA 并比较*（或 EEGNet、ShallowConvNet、SCCNet）。",
        "本對話中只訓練並評估了 {trained}（{score}），還沒有可比較的對象。要和哪個解碼器比較？例如可以說"
        "*訓練 CSP+LDA 並比較*（或 EEGNet、ShallowConvNet、SCCNet）。",
    ),
    "demo.compare_none": (
        "No decoder has been trained in this conversation yet, so there is nothing to compare. "
        "Name the ones to train, for example *train CSP+LDA and EEGNet and compare*.",
        "本对话中还没有训练任何解码器，没有可比较的结果。请说出要训练哪些，例如*训练 CSP+LDA 和 EEGNet "
        "并比较*。",
        "本對話中還沒有訓練任何解碼器，沒有可比較的結果。請說出要訓練哪些，例如*訓練 CSP+LDA 和 EEGNet "
        "並比較*。",
    ),
}
